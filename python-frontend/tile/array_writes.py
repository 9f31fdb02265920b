"""Which array parameters a traced kernel may write, read from its IR text:
the launch checks read-only arrays against it, tile.torch declares a custom
op's mutated arguments with it."""

import re

from . import interop

_ARRAY_ARG = re.compile(r"(%[^\s:,()]+): !tile\.array<")
_SSA_USE = re.compile(r"%[\w$.\-]+")  # views are numbered (%3)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_OP_NAME = re.compile(r"^\s*(?:%\S+ = )?([a-z_]+\.[\w.]+)")
_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):\d+\)\s*$')
# Ops that only read the arrays they name: any other use is taken as a write.
_READING_OPS = frozenset({"tile.load", "tile.gather", "tile.dim", "tile.stride"})
_VIEW_OPS = frozenset({"tile.array_slice", "tile.raw_view", "tile.array_select"})


def array_writes(ir_text, params, key):
    """{parameter name: (op, file, line)} of the array parameters that the
    traced IR may write (stores, scatters, atomics), each with its first
    write."""
    arrays = [n for (n, const), part in zip(params, key)
              if not const and part.__class__ is tuple
              for _ in range(interop.list_length(part) or 1)]  # a list: its arrays
    lines = ir_text.splitlines()
    head = next((i for i, ln in enumerate(lines) if "func.func" in ln), None)
    if head is None or not arrays:
        return {}
    ssa = dict(zip(_ARRAY_ARG.findall(lines[head]), arrays))
    writes = {}
    for ln in lines[head + 1:]:
        loc = _LOC.search(ln)
        code = _STRING.sub('""', ln[:loc.start()] if loc else ln)
        used = [ssa[u] for u in _SSA_USE.findall(code) if u in ssa]
        op = _OP_NAME.match(code)
        op = op.group(1) if op else "?"
        if used and op in _VIEW_OPS:  # a view writes where its array is written
            ssa[code.split("=")[0].strip()] = used[0]
            continue
        if not used or op in _READING_OPS:
            continue
        where = (loc.group(1), int(loc.group(2))) if loc else ("?", 0)
        for name in used:
            writes.setdefault(name, (op,) + where)
    return writes
