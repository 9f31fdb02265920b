// tile.grid_dependency_control: round trip; nvvm.griddepcontrol on the GPU;
// gone on the host (launches there run in order).
// RUN: tile-opt %s | tile-opt | FileCheck %s --check-prefix=ROUND
// RUN: tile-opt %s --tile-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s -convert-tile-to-host | FileCheck %s --check-prefix=HOST

// ROUND: tile.grid_dependency_control wait
// ROUND: tile.grid_dependency_control launch_dependents
// GPU: nvvm.griddepcontrol wait
// GPU: nvvm.griddepcontrol launch_dependents
// HOST-NOT: grid_dependency_control
module {
  func.func @k(%x: !tile.array<?xf32, strides = [1], align = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    tile.grid_dependency_control wait
    %t = tile.load %x[%c0] : !tile.array<?xf32, strides = [1], align = 16> -> tensor<128xf32>
    tile.store %x[%c0], %t : !tile.array<?xf32, strides = [1], align = 16>, tensor<128xf32>
    tile.grid_dependency_control launch_dependents
    return
  }
}
