"""The module globals a trace read, and whether they have changed since.

Tracing runs the kernel's Python: a helper function or a number it reads
from its module's globals becomes part of the traced IR. A binary cached
for a specialization key is only right while those globals hold what the
trace saw, so each CompiledKernel keeps a watch on them, and a launch whose
watch reports a change traces again (a new binary; the disk cache is keyed
by the IR, so a value that comes back finds its old binary). Triton raises
on such a change; tracing again keeps `kernel[grid](...)` reading the
current globals, as a new process does.

Watched: the names the traced code loads as globals (LOAD_GLOBAL, in the
kernel, the user helpers it calls and their nested functions), and the
attributes it reads right off a module of the user's (`config.SCALE`; not
off tile, NumPy or another installed library); a name not in the globals (a
builtin) is watched for appearing. Not watched: a name the code assigns
(`global n; n += 1` counts traces), the inside of a mutable
global (a dict's items, a class's attributes) and deeper attribute chains
(`pkg.sub.X` watches `pkg.sub` only). The closure cells of the kernel and
its helpers are watched as globals are (a kernel defined in a function,
reading a variable of it that a loop rebinds).

A watch is a tuple of groups, one per globals dict:
[dict, version, names, values, absent_names], and one [None, 0, cells,
values, ()] of the closure cells; `version` is the dict's
version tag when it was last found unchanged (0: unknown), which lets the C
check (`_tile.globals_changed`, the same contract) skip a dict nobody wrote
to; `values` is a list the check refreshes in place when a name is rebound
to an equal value (a float by its bits: -0.0 is not 0.0), so that the next
check is an identity test again."""

import dis
import types

from . import ir
from .rewrite import library_file

# Values compared by ==, of the same type, when not the same object.
_BY_VALUE = (int, bool, str, bytes)

_code_reads = {}  # code object -> (names and (name, attribute) read, names assigned, user's?)


def _reads_of(code):
    """What user `code` (and the code nested in it) loads as globals, with
    (name, attribute) for each attribute it reads right off one, less the
    names it assigns (`global n; n += 1`: trace-time state, not an input);
    the names it assigns, globals or closure variables; and whether it is
    the user's (nothing is read from tile's or installed libraries' code)."""
    reads = _code_reads.get(code)
    if reads is None:
        if library_file(code.co_filename):
            reads = (frozenset(), frozenset(), False)
        else:
            found, stored = _global_accesses(code)
            reads = (frozenset(n for n in found
                               if (n if n.__class__ is str else n[0]) not in stored),
                     frozenset(stored), True)
        _code_reads[code] = reads
    return reads


def _global_accesses(code):
    found, stored, last = set(), set(), None
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL":
            found.add(ins.argval)
        elif ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF"):
            stored.add(ins.argval)
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and last is not None:
            found.add((last, ins.argval))
        last = ins.argval if ins.opname == "LOAD_GLOBAL" else None
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            inner_found, inner_stored = _global_accesses(c)
            found |= inner_found
            stored |= inner_stored
    return found, stored


_user_modules = {}  # module name -> is it the user's (not a library)?


def _user_module(m):
    user = _user_modules.get(m.__name__)
    if user is None:
        path = getattr(m, "__file__", None)  # None: a builtin module
        user = _user_modules[m.__name__] = bool(path) and not library_file(path)
    return user


def _note(reads, g, name):
    entry = reads.get(id(g))
    if entry is None:
        entry = reads[id(g)] = (g, set())
    entry[1].add(name)


def record(fn):
    """Notes, in the active trace, the globals `fn`'s code loads, the
    attributes it reads off the user's own modules (`config.SCALE`) and its
    closure's cells (rewrite.py's copy of a function names its original)."""
    b = ir.current()
    fn = getattr(fn, "__tile_original__", fn)
    code = getattr(fn, "__code__", None)
    g = getattr(fn, "__globals__", None)
    if b is None or code is None or type(g) is not dict:
        return
    reads = b.global_reads
    names, assigned, user_code = _reads_of(code)
    if fn.__closure__ and user_code:
        cells = reads.setdefault(None, (None, {}))[1]  # id -> cell (cells are unhashable)
        for name, cell in zip(code.co_freevars, fn.__closure__):
            if name not in assigned:
                cells[id(cell)] = cell
    for item in names:
        if item.__class__ is str:
            _note(reads, g, item)
            continue
        m = g.get(item[0])
        if isinstance(m, types.ModuleType) and _user_module(m):
            _note(reads, m.__dict__, item[1])


def snapshot(reads):
    """The watch of a finished trace's `global_reads`."""
    groups = []
    for g, names in reads.values():
        if g is None:  # closure cells, bound ones
            cells = tuple(c for c in names.values() if _bound(c))
            groups.append([None, 0, cells, [c.cell_contents for c in cells], ()])
            continue
        present = tuple(sorted(n for n in names if n in g))
        absent = tuple(sorted(n for n in names if n not in g))
        groups.append([g, 0, present, [g[n] for n in present], absent])
    return tuple(groups)


def _bound(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:  # a free variable not bound yet
        return False


def _same(old, new):
    if old is new:
        return True
    if type(old) is not type(new):
        return False
    if type(old) is float:
        return old.hex() == new.hex()
    return isinstance(old, _BY_VALUE) and old == new


def changed(watch):
    """Has a global the watch records been rebound (to a different value)?"""
    return checker()(watch)


def checker():
    """_tile.globals_changed, or its Python reference without `_tile`."""
    global _check
    if _check is None:
        from . import backend
        try:
            mod = backend.load()
        except Exception:  # noqa: BLE001 - a broken _tile: launching reports it
            mod = None
        _check = getattr(mod, "globals_changed", None) or changed_in_python
    return _check


_check = None


def changed_in_python(watch):
    """`_tile.globals_changed` without `_tile` (and its reference)."""
    for group in watch:
        g, _, names, values, absent = group
        for i, name in enumerate(names):
            if g is None:  # `name` is a cell
                new = name.cell_contents if _bound(name) else changed_in_python
            else:
                new = g.get(name, changed_in_python)
            if not _same(values[i], new):
                return True
            values[i] = new
        if any(name in g for name in absent):
            return True
    return False
