//===- tile-opt.cpp - mlir-opt with the tile dialect and passes -----------===//
//
// Registers only what the project needs: the tile dialect, the upstream
// dialects its pipelines produce, the tile passes and the named pipelines.
// The input is checked against compiler/InputLimits.h before MLIR parses it:
// hostile input (deep nesting, huge literals) gets a diagnostic, not a stack
// overflow or a parse that never ends.
//
//===----------------------------------------------------------------------===//
#include "compiler/InputLimits.h"
#include "compiler/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tile::registerAllDialects(registry);
  mlir::tile::registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "tile optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Nothing to read: MlirOptMain prints the dialects or passes.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  // The rest of MlirOptMain, with the input checked between reading it (it
  // may be stdin, which cannot be read twice) and parsing it.
  llvm::InitLLVM initLLVM(argc, argv);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (std::optional<mlir::tile::InputLimitViolation> violation =
          mlir::tile::findInputLimitViolation(input->getBuffer())) {
    llvm::errs() << mlir::tile::formatInputLimitViolation(
        input->getBuffer(), input->getBufferIdentifier(), *violation);
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
