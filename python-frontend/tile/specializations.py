"""Kernel.cache's dict: specialization key -> CompiledKernel, which tells the
C dispatcher (it caches entries of its own) when an entry is replaced or
removed."""


class Specializations(dict):
    """Kernel.cache: specialization key -> CompiledKernel. A dict that tells
    the C dispatcher (which caches entries of its own) when it changes."""

    __slots__ = ("_on_change",)

    def __init__(self):
        super().__init__()
        self._on_change = None

    def _changed(self):
        f = self._on_change
        if f is not None:
            f()

    def __setitem__(self, key, value):
        replaced = key in self  # a new key leaves the dispatcher's entries valid
        super().__setitem__(key, value)
        if replaced:
            self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def __ior__(self, other):
        super().update(other)
        self._changed()
        return self

    def clear(self):
        super().clear()
        self._changed()

    def pop(self, *args):
        try:
            return super().pop(*args)
        finally:
            self._changed()

    def popitem(self):
        try:
            return super().popitem()
        finally:
            self._changed()

    def setdefault(self, key, default=None):
        try:
            return super().setdefault(key, default)
        finally:
            self._changed()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()
