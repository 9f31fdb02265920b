"""Source rewriting that makes `tile.range` loops carry values with ordinary
Python rebinding.

A kernel (and every plain helper it calls) is re-compiled from its source with
two changes, keeping file names, lines and columns:

- every `for TARGET in ITER: BODY` (without break/continue/return/else)
  becomes a body function and a call to the runtime:

      def __tile_body_1(__tile_iv, a, b):
          TARGET = __tile_iv
          BODY
          return (a, b)
      (a, b) = __tile_rt.for_(ITER, __tile_body_1,
                              __tile_rt.grab(locals(), ('a', 'b')), ('a', 'b'), live)

  `for_` runs a plain Python loop for ordinary iterables (unchanged semantics)
  and traces an `scf.for` for `tile.range`, the names being its candidates
  for loop-carried values;
- every call `f(...)` becomes `__tile_rt.call(f, ...)`, so helpers are
  rewritten the same way when the kernel calls them.
"""

import ast
import inspect
import os
import sysconfig
import textwrap
import threading
import types
from collections import Counter

RT = "__tile_rt"

_PKG_DIR = os.path.dirname(os.path.realpath(__file__)) + os.sep
_LIB_DIRS = tuple({os.path.realpath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib",
                                                         "platlib")
                   if (p := sysconfig.get_paths().get(k))})
# Calls that must run in the caller's own frame.
_FRAME_SENSITIVE = {"locals", "vars", "dir", "super", "eval", "exec", "globals",
                    "breakpoint"}


class _Undefined:
    """The value of a name that was not bound before a loop."""

    __slots__ = ()

    def __repr__(self):
        return "<unbound variable>"

    def __bool__(self):
        from .errors import TileTypeError
        raise TileTypeError("a variable that was only assigned inside a loop with zero "
                            "trips (or only inside a tile.range loop) was used")


UNDEF = _Undefined()


def _loads(nodes):
    c = Counter()
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                c[sub.id] += 1
    return c


class _Stores(ast.NodeVisitor):
    """Names bound by statements of one scope (nested scopes excluded)."""

    def __init__(self):
        self.names = []
        self.escapes = False  # break/continue/return/yield at this loop level
        self.scoped = False   # global/nonlocal declarations
        self._loop_depth = 0

    def _add(self, name):
        if name not in self.names and not name.startswith("__tile_"):
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._add(node.id)

    def visit_FunctionDef(self, node):
        self._add(node.name)
        for d in node.decorator_list:
            self.visit(d)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._add(node.name)

    def visit_Lambda(self, node):
        pass

    def _comp(self, node):
        pass  # comprehensions have their own scope

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comp

    def visit_NamedExpr(self, node):
        self._add(node.target.id)
        self.visit(node.value)

    def visit_Import(self, node):
        for a in node.names:
            self._add((a.asname or a.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_Global(self, node):
        self.scoped = True

    visit_Nonlocal = visit_Global

    def _loop(self, node):
        self._loop_depth += 1
        self.generic_visit(node)
        self._loop_depth -= 1

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_Break(self, node):
        if self._loop_depth == 0:
            self.escapes = True

    visit_Continue = visit_Break

    def visit_Return(self, node):
        self.escapes = True

    visit_Yield = visit_YieldFrom = visit_Await = visit_Return

    def visit_ExceptHandler(self, node):
        if node.name:
            self._add(node.name)
        self.generic_visit(node)


def _locate(tree, src):
    """Gives every node of `tree` that has no position the position of `src`
    (so new code reports the line and column of the code it replaces)."""
    for sub in ast.walk(tree):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            ast.copy_location(sub, src)
    return tree


def _rt(attr, src=None):
    """`__tile_rt.attr`. CPython reports a method call at the end of its
    attribute, so the attribute ends where `src` starts plus len(attr): the
    call then reports the line and column of `src`, the code it replaces."""
    node = ast.Attribute(value=ast.Name(id=RT, ctx=ast.Load()), attr=attr, ctx=ast.Load())
    if src is not None:
        for n in (node, node.value):
            n.lineno = n.end_lineno = src.lineno
            n.col_offset = src.col_offset
            n.end_col_offset = src.col_offset + len(attr)
    return node


def _const_tuple(values):
    return ast.Tuple(elts=[ast.Constant(value=v) for v in values], ctx=ast.Load())


def _names_tuple(names, ctx):
    return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx())


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.counter = 0
        self.scope_loads = []

    def visit_FunctionDef(self, node):
        self.scope_loads.append(_loads(node.body))
        self.generic_visit(node)
        self.scope_loads.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.scope_loads.append(_loads([node.body]))
        self.generic_visit(node)
        self.scope_loads.pop()
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_SENSITIVE:
            return node
        new = ast.Call(func=_rt("call", node), args=[node.func] + node.args,
                       keywords=node.keywords)
        return ast.copy_location(new, node)

    def visit_For(self, node):
        stores = _Stores()
        stores.visit(node.target)
        for stmt in node.body:
            stores.visit(stmt)
        inside = _loads(node.body)
        self.generic_visit(node)
        if node.orelse or stores.escapes or stores.scoped or not self.scope_loads:
            return node
        names = stores.names
        total = self.scope_loads[-1]
        live = tuple(total[n] > inside[n] for n in names)
        self.counter += 1
        body_name = f"__tile_body_{self.counter}"
        fn = ast.parse(f"def {body_name}(__tile_iv): pass").body[0]
        fn.args.args += [ast.arg(arg=n) for n in names]
        bind = ast.Assign(targets=[node.target],
                          value=ast.Name(id="__tile_iv", ctx=ast.Load()))
        ret = ast.Return(value=_names_tuple(names, ast.Load))
        init = ast.Call(func=_rt("grab", node),
                        args=[ast.Call(func=ast.Name(id="locals", ctx=ast.Load()),
                                       args=[], keywords=[]),
                              _const_tuple(names)], keywords=[])
        call = ast.Call(func=_rt("for_", node),
                        args=[node.iter, ast.Name(id=body_name, ctx=ast.Load()), init,
                              _const_tuple(names), _const_tuple(live)],
                        keywords=[])
        if names:
            stmt = ast.Assign(targets=[_names_tuple(names, ast.Store)], value=call)
        else:
            stmt = ast.Expr(value=call)
        # New nodes take the `for` line; the body keeps its own positions.
        for n in (fn, bind, ret, stmt):
            ast.copy_location(n, node)
            _locate(n, node)
        fn.body = [bind] + node.body + [ret]
        out = [fn, stmt]
        return out


class _KernelReturns(ast.NodeTransformer):
    """`return v` -> `return __tile_rt.kernel_return(v)` in a kernel's own body
    (not in functions nested in it), so that returning a value is reported at
    the `return`."""

    def _scope(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _scope

    def visit_Return(self, node):
        if node.value is not None:
            call = ast.Call(func=_rt("kernel_return", node.value), args=[node.value],
                            keywords=[])
            node.value = ast.copy_location(call, node.value)
        return node


def _is_user_function(f):
    code = f.__code__
    fname = code.co_filename
    if fname.startswith("<"):
        return False
    # realpath: sys.path entries like "bench/../python-frontend" must not make
    # the package's own functions look like user code (rewriting them costs
    # milliseconds each on a first call).
    real = os.path.realpath(fname)
    if real.startswith(_PKG_DIR) or real.startswith(_LIB_DIRS):
        return False
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR):
        return False
    return f.__name__ != "<lambda>" and "__class__" not in code.co_freevars


# The rewritten factories, keyed on the identity of the function's code object
# and globals (code objects compare equal by value: two modules holding the
# same text at the same lines must not share a factory, which runs with the
# globals and reports the file of the module it was made for). An entry keeps
# its code and globals alive so that their ids are not reused.
_factories = {}      # (id(code), id(globals), strip_decorators) -> _Entry
_generated = {}      # id -> code object we compiled (never rewritten again)
_lock = threading.Lock()  # first calls from several threads rewrite once


class _Entry:
    __slots__ = ("code", "globals", "factory", "def_line")

    def __init__(self, code, globals_, made):
        self.code, self.globals = code, globals_
        self.factory, self.def_line = made if made is not None else (None, None)


def _collect_codes(code):
    _generated[id(code)] = code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _collect_codes(c)


def _key(f, strip_decorators):
    return (id(f.__code__), id(f.__globals__), strip_decorators)


def _factory_for(f, strip_decorators):
    """The _Entry of `f`'s rewritten source (factory None when `f` cannot be
    rewritten), made once per code object and globals."""
    key = _key(f, strip_decorators)
    entry = _factories.get(key)
    if entry is not None:
        return entry
    with _lock:
        entry = _factories.get(key)
        if entry is None:
            made = None
            if id(f.__code__) not in _generated and _is_user_function(f):
                made = _make_factory(f, strip_decorators)
            entry = _factories[key] = _Entry(f.__code__, f.__globals__, made)
    return entry


def _make_factory(f, strip_decorators):
    code = f.__code__
    try:
        lines, start = inspect.getsourcelines(f)
    except (OSError, TypeError):
        return None
    src = "".join(lines)
    indented = src[:1] in (" ", "\t")
    try:
        tree = ast.parse("if 1:\n" + src if indented else textwrap.dedent(src))
    except SyntaxError:
        return None
    ast.increment_lineno(tree, start - (2 if indented else 1))
    body = tree.body[0].body if indented else tree.body
    fdefs = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == f.__name__]
    if not fdefs:
        return None
    fdef = fdefs[0]
    if fdef.decorator_list and not strip_decorators:
        return None  # a decorated helper may not be the function we see
    fdef.decorator_list = []
    fdef.returns = None
    for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs:
        a.annotation = None
    fdef.args.defaults = []  # restored from the live function object
    fdef.args.kw_defaults = [None] * len(fdef.args.kwonlyargs)
    fdef = _Rewriter().visit(fdef)
    if strip_decorators:  # a kernel
        returns = _KernelReturns()
        fdef.body = [returns.visit(stmt) for stmt in fdef.body]
    freevars = list(code.co_freevars)
    factory = ast.parse("def __tile_factory(): pass").body[0]
    factory.args.args = [ast.arg(arg=RT)] + [ast.arg(arg=v) for v in freevars]
    factory.body = [fdef, ast.Return(value=ast.Name(id=f.__name__, ctx=ast.Load()))]
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, fdef)
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, code.co_filename, "exec")
    except SyntaxError:
        return None
    _collect_codes(compiled)
    ns = {}
    exec(compiled, f.__globals__, ns)
    return ns["__tile_factory"], fdef.lineno


def rewritten(f, runtime, strip_decorators=False):
    """`f` re-created from its rewritten source, or None when it cannot be
    (no source, a lambda, a library function, a decorated helper...)."""
    if type(f) is not types.FunctionType:
        return None
    entry = _factory_for(f, strip_decorators)
    if entry.factory is None:
        return None
    cells = []
    for c in f.__closure__ or ():
        try:
            cells.append(c.cell_contents)
        except ValueError:  # a free variable not bound yet
            cells.append(UNDEF)
    g = entry.factory(runtime, *cells)
    g.__defaults__ = f.__defaults__
    g.__kwdefaults__ = f.__kwdefaults__
    return g


def def_line(f):
    """The line of `def` (co_firstlineno is the first decorator's)."""
    entry = _factories.get(_key(f, True))
    return entry.def_line if entry and entry.factory else f.__code__.co_firstlineno


def grab(local_vars, names):
    """The current values of `names` (UNDEF where unbound)."""
    return tuple(local_vars.get(n, UNDEF) for n in names)

