"""`tile.tune`: cuTile's autotuning namespace. `exhaustive_search` belongs
to the autotuning work of issue 16 and is not implemented yet: calling it
raises TileUnsupportedFeatureError (the name exists so that importing a
cuTile program works)."""

from .errors import TileUnsupportedFeatureError

__all__ = ["exhaustive_search"]


def exhaustive_search(*args, **kwargs):
    """Not yet: raises TileUnsupportedFeatureError."""
    raise TileUnsupportedFeatureError(
        "tile.tune.exhaustive_search is not implemented yet",
        "pick a configuration by hand (benchmark kernel.replace_hints(...) or "
        "different Constants); autotuning is an open part of issue 16")
