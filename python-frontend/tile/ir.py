"""A tiny builder of textual MLIR: SSA names, nested blocks, locations.

Text is all the C++ side needs (docs/internals.md section 1), and building it
in pure Python keeps `import tile` free of native dependencies.
"""

import threading

from .errors import TileTypeError, user_location

_state = threading.local()


def current():
    """The active Builder, or None outside tracing."""
    return getattr(_state, "builder", None)


def builder(what="this function"):
    b = getattr(_state, "builder", None)
    if b is None:
        raise TileTypeError(
            f"{what} can only be used inside a @tile.kernel function",
            "call it from a kernel body (or a helper called by one); on the "
            "host, use NumPy/torch instead")
    return b


class Block:
    """Lines of one region's block. Constants are reused from enclosing
    blocks, except in isolated ones (reduce/scan combiners, which backends
    clone as self-contained scalar code)."""

    __slots__ = ("lines", "consts", "parent", "isolated")

    def __init__(self, parent, isolated=False):
        self.lines = []
        self.consts = {}
        self.parent = parent
        self.isolated = isolated

    def lookup_const(self, key):
        b = self
        while b is not None:
            name = b.consts.get(key)
            if name is not None:
                return name
            b = None if b.isolated else b.parent
        return None


def mlir_string(s):
    """`s` as an MLIR string literal: the lexer takes \\ \\" and \\XX escapes
    only, and ends the literal with an error at a raw newline or NUL, so
    every control character is escaped (non-ASCII text stays UTF-8)."""
    return '"' + str(s).translate(_MLIR_ESCAPES) + '"'


_MLIR_ESCAPES = {c: f"\\{c:02X}" for c in [*range(0x20), 0x7F]}
_MLIR_ESCAPES.update({ord("\\"): "\\\\", ord('"'): '\\"'})


def loc_text(location):
    f, line, col = location
    return f"loc({mlir_string(f)}:{line}:{col})"


def tensor_type(shape, elem):
    if not shape:
        return f"tensor<{elem}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{elem}>"


class Builder:
    """Collects ops into the current block. Regions are built by pushing a
    block, tracing into it, and popping its lines into the parent op."""

    def __init__(self, kernel_name):
        self.kernel_name = kernel_name
        self.counter = 0
        self.block = Block(None)
        # id(globals dict) -> (dict, names): what the traced code loads
        # (global_watch.py).
        self.global_reads = {}

    # -- activation ------------------------------------------------------
    def __enter__(self):
        self._prev = getattr(_state, "builder", None)
        _state.builder = self
        return self

    def __exit__(self, *exc):
        _state.builder = self._prev

    # -- names and blocks ------------------------------------------------
    def fresh(self):
        self.counter += 1
        return f"%{self.counter}"

    def push(self, isolated=False):
        self.block = Block(self.block, isolated)
        return self.block

    def resume(self, block):
        """Re-opens a popped child `block` of the current one (to append a
        region's terminator once both regions of an op are known)."""
        block.parent = self.block
        self.block = block

    def pop(self):
        """Closes the current block and returns its lines."""
        blk = self.block
        self.block = blk.parent
        return blk.lines

    # -- emission --------------------------------------------------------
    def emit(self, rhs, nres=1, loc=None):
        """Appends `results = rhs loc(...)`; returns the result name(s)."""
        loc = loc_text(loc or user_location())
        if nres == 0:
            self.block.lines.append(f"{rhs} {loc}")
            return None
        name = self.fresh()
        if nres == 1:
            self.block.lines.append(f"{name} = {rhs} {loc}")
            return name
        self.block.lines.append(f"{name}:{nres} = {rhs} {loc}")
        return [f"{name}#{i}" for i in range(nres)]

    def emit_region_op(self, head, body, tail="", nres=1, loc=None):
        """An op whose text is `head {` + body lines + `}` + tail."""
        loc = loc_text(loc or user_location())
        inner = ["  " + line for line in body]
        if nres == 0:
            prefix, names = "", None
        else:
            name = self.fresh()
            if nres == 1:
                prefix, names = f"{name} = ", name
            else:
                prefix, names = f"{name}:{nres} = ", [f"{name}#{i}" for i in range(nres)]
        self.block.lines.append(prefix + head + " {")
        self.block.lines.extend(inner)
        self.block.lines.append(f"}}{tail} {loc}")
        return names

    def constant(self, literal, type_text):
        """`arith.constant`, reused within the block (and its children)."""
        key = (literal, type_text)
        name = self.block.lookup_const(key)
        if name is None:
            if type_text.startswith("tensor"):
                rhs = f"arith.constant dense<{literal}> : {type_text}"
            elif literal in ("true", "false"):
                rhs = f"arith.constant {literal}"
            else:
                rhs = f"arith.constant {literal} : {type_text}"
            name = self.emit(rhs)
            self.block.consts[key] = name
        return name
