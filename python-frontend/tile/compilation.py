"""`tile.compilation`: cuTile's ahead-of-time export namespace. Exporting
a kernel for given signatures (`export_kernel`) is not implemented yet and
raises TileUnsupportedFeatureError; `kernel.compile(*args, **constants)`
gives a specialization's stages (`.asm["ptx"]`, `.asm["cubin"]`) today."""

from .errors import TileUnsupportedFeatureError

__all__ = ["export_kernel"]


def export_kernel(kernel, signatures, output_file, *, gpu_code=None, output_format,
                  bytecode_version=None):
    """Not yet: raises TileUnsupportedFeatureError."""
    raise TileUnsupportedFeatureError(
        "tile.compilation.export_kernel is not implemented yet",
        "use kernel.compile(*args, **constants).asm['cubin'] (or tilec --emit cubin) "
        "to get a specialization's binary")
