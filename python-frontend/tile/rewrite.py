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
from collections import defaultdict

from .escapes import lower_escapes

RT = "__tile_rt"

_PKG_DIR = os.path.dirname(os.path.realpath(__file__)) + os.sep
_LIB_DIRS = tuple({os.path.realpath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib",
                                                         "platlib")
                   if (p := sysconfig.get_paths().get(k))})
# Calls that must run in the caller's own frame.
_FRAME_SENSITIVE = {"locals", "vars", "dir", "super", "eval", "exec", "globals",
                    "breakpoint"}


# Names of the functions the rewrite defines (the flags of escapes.py are
# ordinary variables and are carried like any other).
_GENERATED = ("__tile_body_", "__tile_then_", "__tile_else_", "__tile_cond_", "__tile_iv",
              "__tile_rt")


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
    """Where each name is read in `nodes`: (line, column) of each read, or
    None for a read inside a nested function (which may run at any time)."""
    where = defaultdict(list)

    def walk(node, nested):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            where[node.id].append(None if nested else (node.lineno, node.col_offset))
        nested = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                             ast.Lambda))
        for child in ast.iter_child_nodes(node):
            walk(child, nested)

    for n in nodes:
        walk(n, False)
    return where


class _Stores(ast.NodeVisitor):
    """Names bound by statements of one scope (nested scopes excluded)."""

    def __init__(self):
        self.names = []
        self.escapes = False  # break/continue/return/yield at this loop level
        self.scoped = False   # global/nonlocal declarations
        self._loop_depth = 0

    def _add(self, name):
        if name not in self.names and not name.startswith(_GENERATED):
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


def _span(*nodes):
    """The source span of `nodes` and everything in them: an escape's guard
    `if` takes the position of its first statement only."""
    at = [(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
          for node in nodes for n in ast.walk(node)
          if getattr(n, "end_lineno", None) is not None]
    return (min(a[:2] for a in at), max(a[2:] for a in at)) if at else None


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
        self.scope_loops = []  # per scope: the loops around the node visited
        self.scope_ifs = []  # per scope: the spans of the ifs' two branches around it

    def visit_FunctionDef(self, node):
        self.scope_loads.append(_loads(node.body))
        self.scope_loops.append([])
        self.scope_ifs.append([])
        self.generic_visit(node)
        self.scope_ifs.pop()
        self.scope_loops.pop()
        self.scope_loads.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.scope_loads.append(_loads([node.body]))
        self.scope_loops.append([])
        self.scope_ifs.append([])
        self.generic_visit(node)
        self.scope_ifs.pop()
        self.scope_loops.pop()
        self.scope_loads.pop()
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_SENSITIVE:
            return node
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == RT:
            return node  # the runtime's own calls
        new = ast.Call(func=_rt("call", node), args=[node.func] + node.args,
                       keywords=node.keywords)
        return ast.copy_location(new, node)

    def _branch_fn(self, name, names, body, src):
        fn = ast.parse(f"def {name}(): pass").body[0]
        fn.args.args = [ast.arg(arg=n) for n in names]
        # grab: UNDEF for a name the branch unbinds (`del u`), so if_ reports
        # it used after the if at its line (a bare return raised
        # UnboundLocalError in our generated code).
        ret = ast.Return(value=self._grab(names, src))
        for n in (fn, ret):
            ast.copy_location(n, src)
            _locate(n, src)
        fn.body = list(body) + [ret]
        return fn

    def _grab(self, names, src):
        return ast.Call(func=_rt("grab", src),
                        args=[ast.Call(func=ast.Name(id="locals", ctx=ast.Load()),
                                       args=[], keywords=[]),
                              _const_tuple(names)], keywords=[])

    def _bind(self, names, call, src):
        if names:
            stmt = ast.Assign(targets=[_names_tuple(names, ast.Store)], value=call)
        else:
            stmt = ast.Expr(value=call)
        ast.copy_location(stmt, src)
        return _locate(stmt, src)

    def _live(self, names, node):
        """Per name, whether it may be read after `node`: below it but not in
        the other branch of an `if` around it, anywhere else in a loop
        around it (the next iteration), or by a nested function. (Not
        merely anywhere in the function: a loop would carry a name that only
        another branch's loop reads, which keeps the kernel from warp
        specialization.)"""
        span = _span(node)
        if span is None:
            # Generated code without positions: read anywhere else.
            inside = _loads([node])
            return tuple(len(self.scope_loads[-1].get(n, ())) > len(inside.get(n, ()))
                         for n in names)
        loops = self.scope_loops[-1]
        outer = _span(loops[0]) if loops else None
        start, end = span
        # The spans of the other branches of the ifs around `node`.
        elsewhere = [other for branches in self.scope_ifs[-1]
                     for mine, other in (branches, branches[::-1])
                     if mine and mine[0] <= start and end <= mine[1] and other]

        def read_after(name):
            return any(at is None
                       or (outer and outer[0] <= at < outer[1] and not start <= at < end)
                       or (at >= end and not any(a <= at < b for a, b in elsewhere))
                       for at in self.scope_loads[-1].get(name, ()))
        return tuple(read_after(n) for n in names)

    def _loop_names(self, node, head):
        """(names the loop rebinds, their liveness after it), or None when the
        loop stays Python (for-else, global/nonlocal, not in a function)."""
        stores = _Stores()
        stores.visit(head)
        for stmt in node.body:
            stores.visit(stmt)
        if not self.scope_loads:
            self.generic_visit(node)
            return None
        self.scope_loops[-1].append(node)
        self.generic_visit(node)
        self.scope_loops[-1].pop()
        if node.orelse or stores.escapes or stores.scoped:
            return None
        return stores.names, self._live(stores.names, node)

    def _loop_args(self, node, names, live, *fns):
        args = [*fns, self._grab(names, node), _const_tuple(names), _const_tuple(live)]
        brk = getattr(node, "tile_break_flag", None)
        if brk is not None:
            args.append(ast.Constant(value=names.index(brk)))
        return args

    def visit_For(self, node):
        found = self._loop_names(node, node.target)
        if found is None:
            return node
        names, live = found
        self.counter += 1
        body_name = f"__tile_body_{self.counter}"
        fn = ast.parse(f"def {body_name}(__tile_iv): pass").body[0]
        fn.args.args += [ast.arg(arg=n) for n in names]
        bind = ast.Assign(targets=[node.target],
                          value=ast.Name(id="__tile_iv", ctx=ast.Load()))
        ret = ast.Return(value=_names_tuple(names, ast.Load))
        args = self._loop_args(node, names, live, node.iter,
                               ast.Name(id=body_name, ctx=ast.Load()))
        call = ast.Call(func=_rt("for_", node), args=args, keywords=[])
        stmt = self._bind(names, call, node)
        # New nodes take the `for` line; the body keeps its own positions.
        for n in (fn, bind, ret):
            ast.copy_location(n, node)
            _locate(n, node)
        fn.body = [bind] + node.body + [ret]
        return [fn, stmt]

    def visit_While(self, node):
        found = self._loop_names(node, node.test)
        if found is None:
            return node
        names, live = found
        self.counter += 1
        cond = self._branch_fn(f"__tile_cond_{self.counter}", names, [], node)
        cond.body = [ast.copy_location(ast.Return(value=node.test), node.test)]
        body = self._branch_fn(f"__tile_body_{self.counter}", names, node.body, node)
        args = self._loop_args(node, names, live, ast.Name(id=cond.name, ctx=ast.Load()),
                               ast.Name(id=body.name, ctx=ast.Load()))
        call = ast.Call(func=_rt("while_", node), args=args, keywords=[])
        return [cond, body, self._bind(names, call, node)]

    def visit_If(self, node):
        stores = _Stores()
        for stmt in node.body + node.orelse:
            stores.visit(stmt)
        first_store = [_first_stores(node.body), _first_stores(node.orelse)]
        if self.scope_ifs:
            self.scope_ifs[-1].append(tuple(_span(*b) if b else None
                                            for b in (node.body, node.orelse)))
        self.generic_visit(node)
        if self.scope_ifs:
            self.scope_ifs[-1].pop()
        if stores.escapes or stores.scoped or not self.scope_loads:
            return node
        names = stores.names
        self.counter += 1
        then_fn = self._branch_fn(f"__tile_then_{self.counter}", names, node.body, node)
        out = [then_fn]
        else_ref = ast.Constant(value=None)
        if node.orelse:
            else_fn = self._branch_fn(f"__tile_else_{self.counter}", names, node.orelse,
                                      node)
            out.append(else_fn)
            else_ref = ast.Name(id=else_fn.name, ctx=ast.Load())
        lines = tuple((first_store[0].get(n, 0), first_store[1].get(n, 0)) for n in names)
        lines_node = ast.Tuple(elts=[_const_tuple(p) for p in lines], ctx=ast.Load())
        call = ast.Call(func=_rt("if_", node),
                        args=[node.test, ast.Name(id=then_fn.name, ctx=ast.Load()), else_ref,
                              self._grab(names, node), _const_tuple(names),
                              _const_tuple(self._live(names, node)), lines_node],
                        keywords=[])
        if getattr(node, "tile_guard", False):
            call.keywords.append(ast.keyword(arg="guard", value=ast.Constant(value=True)))
        out.append(self._bind(names, call, node))
        return out

    @staticmethod
    def _thunk(expr):
        lam = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                            kw_defaults=[], defaults=[]), body=expr)
        return _locate(ast.copy_location(lam, expr), expr)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        call = ast.Call(func=_rt("ifexp", node),
                        args=[node.test, self._thunk(node.body), self._thunk(node.orelse)],
                        keywords=[])
        return ast.copy_location(call, node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        first, *rest = node.values
        call = ast.Call(func=_rt(fn, node), args=[first] + [self._thunk(v) for v in rest],
                        keywords=[])
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        call = ast.Call(func=_rt("not_", node), args=[node.operand], keywords=[])
        return ast.copy_location(call, node)

    def visit_Compare(self, node):
        # `a < b < c` is `a < b and b < c` (b evaluated once: only simple ones)
        self.generic_visit(node)
        middle = node.comparators[:-1]
        if len(node.ops) < 2 or not all(isinstance(m, (ast.Name, ast.Constant))
                                        for m in middle):
            return node
        lefts = [node.left] + node.comparators[:-1]
        parts = [ast.copy_location(ast.Compare(left=lft, ops=[op], comparators=[right]), node)
                 for lft, op, right in zip(lefts, node.ops, node.comparators)]
        call = ast.Call(func=_rt("and_", node),
                        args=[parts[0]] + [self._thunk(p) for p in parts[1:]], keywords=[])
        return ast.copy_location(call, node)


def _first_stores(stmts):
    """{name: line of its first assignment} in `stmts`."""
    stores = {}
    for stmt in stmts:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                stores.setdefault(sub.id, sub.lineno)
    return stores


class _Unsupported(ast.NodeTransformer):
    """`try` and `with` statements become an error raised at their line when
    traced (cuTile does not compile them either); a `raise` is checked not
    to be under a runtime condition."""

    _HINTS = {"try": "check conditions with if / tile.where instead of catching errors",
              "with": "call the functions directly"}

    def _replace(self, node, what):
        call = ast.Call(func=_rt("unsupported", node),
                        args=[ast.Constant(value=what), ast.Constant(value=self._HINTS[what])],
                        keywords=[])
        stmt = ast.Expr(value=call)
        ast.copy_location(stmt, node)
        return _locate(stmt, node)

    def visit_Try(self, node):
        return self._replace(node, "try")

    visit_TryStar = visit_Try

    def visit_With(self, node):
        return self._replace(node, "with")

    visit_AsyncWith = visit_With

    def visit_Raise(self, node):
        """`raise E` -> `raise __tile_rt.raised(E)` (branches.raised)."""
        if node.exc is not None:
            node.exc = _locate(ast.Call(func=_rt("raised", node.exc), args=[node.exc],
                                        keywords=[]), node.exc)
        return node


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


def library_file(fname):
    """Is `fname` tile's own or an installed library's source?"""
    real = os.path.realpath(fname)
    return real.startswith(_PKG_DIR) or real.startswith(_LIB_DIRS)


def _is_user_function(f):
    code = f.__code__
    fname = code.co_filename
    if fname.startswith("<"):
        return False
    # realpath: sys.path entries like "bench/../python-frontend" must not make
    # the package's own functions look like user code (rewriting them costs
    # milliseconds each on a first call).
    if library_file(fname):
        return False
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR):
        return False
    return code.co_name != "<lambda>" and "__class__" not in code.co_freevars


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
    fdefs = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == code.co_name]
    if not fdefs:
        return None
    fdef = fdefs[0]
    if fdef.decorator_list and not strip_decorators and \
            not getattr(f, "__tile_function__", False):  # @tile.function returns f
        return None  # a decorated helper may not be the function we see
    fdef.decorator_list = []
    fdef.returns = None
    for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs:
        a.annotation = None
    fdef.args.defaults = []  # restored from the live function object
    fdef.args.kw_defaults = [None] * len(fdef.args.kwonlyargs)
    fdef = _Unsupported().visit(fdef)
    if strip_decorators:  # a kernel
        returns = _KernelReturns()
        fdef.body = [returns.visit(stmt) for stmt in fdef.body]
    fdef = _Rewriter().visit(lower_escapes(fdef))
    freevars = list(code.co_freevars)
    factory = ast.parse("def __tile_factory(): pass").body[0]
    factory.args.args = [ast.arg(arg=RT)] + [ast.arg(arg=v) for v in freevars]
    factory.body = [fdef, ast.Return(value=ast.Name(id=code.co_name, ctx=ast.Load()))]
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
    g.__tile_original__ = f  # whose cells global_watch.py watches
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

