"""`break`, `continue` and `return` as flag variables (a source rewrite that
runs before rewrite.py's), so that they work on runtime conditions.

A device loop or a runtime `if` is one structured region (`scf.for`,
`scf.while`, `scf.if`): nothing can jump out of it. So an escape becomes an
assignment to a flag, and the statements after anything that may set a flag
run under `if not flag:`:

    for k in tile.range(n):            __tile_brk_1 = False
        if x[k] > 0:                   for k in tile.range(n):
            break                          if x[k] > 0:
        y = y + 1                              __tile_brk_1 = True
                                           if not __tile_brk_1:
                                               y = y + 1

The loop runtime stops a loop once its break flag is set (a Python loop
stops at once; a device loop tests the flag in its `scf.while` condition),
and `return v` in a nested statement sets `__tile_ret` and `__tile_rv` and
breaks out of every enclosing loop. On trace-time (Constant) conditions the
flags are Python bools, so all of this is folded while tracing.
"""

import ast

RET, RV = "__tile_ret", "__tile_rv"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While)


def _walk_scope(node):
    """The nodes under `node` in its own scope (nested defs excluded)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _assign(name, value, src):
    node = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                      value=value if isinstance(value, ast.AST) else ast.Constant(value=value))
    return _located(node, src)


def _located(node, src):
    for sub in ast.walk(node):
        if "lineno" in sub._attributes:
            ast.copy_location(sub, src)
    return node


def _not_any(flags, src):
    names = [ast.Name(id=f, ctx=ast.Load()) for f in flags]
    test = names[0] if len(names) == 1 else ast.BoolOp(op=ast.Or(), values=names)
    return _located(ast.UnaryOp(op=ast.Not(), operand=test), src)


def _guard_if(test, body, src):
    """`if test: body` at src's line; the body keeps its own lines (its ops
    and errors must point at the user's statements, not at the guard)."""
    node = ast.copy_location(ast.If(test=test, body=body, orelse=[]), src)
    # A name the body binds is never read on the skipped path (everything
    # after an escape is guarded by the same flag), so it needs no value there.
    node.tile_guard = True
    return node


def _sets(stmt, flags):
    """The flags of `flags` that `stmt` may assign."""
    found = set()
    for n in [stmt, *_walk_scope(stmt)]:
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) \
                and n.value.value is True:
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id in flags:
                    found.add(t.id)
    return [f for f in flags if f in found]


def _is_flag_set(stmt, flags):
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in flags
            and isinstance(stmt.value, ast.Constant) and stmt.value.value is True)


def _guard(stmts, flags):
    """`stmts` with everything after a statement that may set one of `flags`
    under `if not (flags it may set):`; code after an unconditional set is
    dropped (it can never run)."""
    out = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.If):
            stmt.body = _guard(stmt.body, flags)
            stmt.orelse = _guard(stmt.orelse, flags)
        out.append(stmt)
        hit = _sets(stmt, flags)
        if not hit or i + 1 == len(stmts):
            continue
        if _is_flag_set(stmt, flags):
            # A flag set unconditionally: the rest of this block is dead,
            # except further flag sets (`rv = v; ret = True; break`).
            out.extend(s for s in stmts[i + 1:] if _is_flag_set(s, flags))
            break
        rest = _guard(stmts[i + 1:], flags)
        out.append(_guard_if(_not_any(hit, stmt), rest, stmts[i + 1]))
        break
    return out or [ast.Pass()]


class _Lowering:
    def __init__(self):
        self.count = 0

    # -- returns ---------------------------------------------------------
    @staticmethod
    def _needs_return_flags(fdef):
        body = fdef.body
        for i, stmt in enumerate(body):
            for n in [stmt, *_walk_scope(stmt)]:
                if isinstance(n, ast.Return) and not (n is stmt and i + 1 == len(body)):
                    return True
        return False

    def _returns(self, stmts, in_loop):
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                value = stmt.value if stmt.value is not None else ast.Constant(value=None)
                out += [_assign(RV, value, stmt), _assign(RET, True, stmt)]
                if in_loop:
                    out.append(_located(ast.Break(), stmt))
                continue
            if isinstance(stmt, _LOOPS):
                had = any(isinstance(n, ast.Return) for n in _walk_scope(stmt))
                stmt.body = self._returns(stmt.body, True)
                stmt.orelse = self._returns(stmt.orelse, in_loop)
                out.append(stmt)
                if had and in_loop:  # leave the enclosing loop too
                    brk = _located(ast.Break(), stmt)
                    out.append(_located(ast.If(test=ast.Name(id=RET, ctx=ast.Load()),
                                               body=[brk], orelse=[]), stmt))
                continue
            if isinstance(stmt, ast.If):
                stmt.body = self._returns(stmt.body, in_loop)
                stmt.orelse = self._returns(stmt.orelse, in_loop)
            out.append(stmt)
        return out

    # -- loops -----------------------------------------------------------
    def _own_escapes(self, loop):
        """break/continue nodes of `loop` itself (not of nested loops)."""
        found = []
        todo = list(loop.body)
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.Break, ast.Continue)):
                found.append(n)
            elif not isinstance(n, _SCOPES + _LOOPS):
                todo.extend(ast.iter_child_nodes(n))
        return found

    def _replace_escapes(self, stmts, brk, cnt):
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Break):
                out.append(_assign(brk, True, stmt))
                continue
            if isinstance(stmt, ast.Continue):
                out.append(_assign(cnt, True, stmt))
                continue
            if isinstance(stmt, ast.If):
                stmt.body = self._replace_escapes(stmt.body, brk, cnt)
                stmt.orelse = self._replace_escapes(stmt.orelse, brk, cnt)
            out.append(stmt)
        return out

    def _loops(self, stmts, flags):
        """Lowers the loops in `stmts` (innermost first) and guards `stmts`."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                stmt.body = self._loops(stmt.body, flags)
                stmt.orelse = self._loops(stmt.orelse, flags)
            if not isinstance(stmt, _LOOPS):
                out.append(stmt)
                continue
            escapes = self._own_escapes(stmt)
            breaks = any(isinstance(e, ast.Break) for e in escapes)
            conts = any(isinstance(e, ast.Continue) for e in escapes)
            if not escapes:
                stmt.body = self._loops(stmt.body, flags)
                orelse, stmt.orelse = stmt.orelse, []
                out.append(stmt)
                out += orelse  # no break: the else part always runs after the loop
                continue
            self.count += 1
            brk = f"__tile_brk_{self.count}"
            cnt = f"__tile_cnt_{self.count}"
            body = self._replace_escapes(stmt.body, brk, cnt)
            own = [f for f, used in ((brk, breaks), (cnt, conts)) if used]
            body = self._loops(body, own + flags)
            if conts:
                body.insert(0, _assign(cnt, False, stmt))
            stmt.body = body
            if breaks:
                out.append(_assign(brk, False, stmt))
                stmt.tile_break_flag = brk
            orelse, stmt.orelse = stmt.orelse, []
            out.append(stmt)
            if orelse:  # for/while-else: runs unless the loop was left by break
                test = _not_any([brk], stmt) if breaks else \
                    _located(ast.Constant(value=True), stmt)
                out.append(_guard_if(test, orelse, stmt))
        return _guard(out, flags)

    def function(self, fdef):
        flags = []
        if self._needs_return_flags(fdef):
            fdef.body = self._returns(fdef.body, False)
            flags = [RET]
            # The value starts unbound (UNDEF: no path has returned yet) and
            # is None when the function falls off its end.
            undef = ast.Attribute(value=ast.Name(id="__tile_rt", ctx=ast.Load()), attr="UNDEF",
                                  ctx=ast.Load())
            head = [_assign(RET, False, fdef), _assign(RV, undef, fdef)]
            tail = ast.Return(value=ast.Call(
                func=ast.Attribute(value=ast.Name(id="__tile_rt", ctx=ast.Load()),
                                   attr="returned", ctx=ast.Load()),
                args=[ast.Name(id=RV, ctx=ast.Load())], keywords=[]))
            last = fdef.body[-1] if fdef.body else fdef
            fdef.body = head + fdef.body
            fdef.tile_return_tail = _located(tail, last)
        fdef.body = self._loops(fdef.body, flags)
        if flags:
            fdef.body.append(fdef.tile_return_tail)


def lower_escapes(fdef):
    """Lowers break/continue/return in `fdef` and in functions nested in it."""
    lowering = _Lowering()
    for node in [fdef, *(n for n in ast.walk(fdef) if n is not fdef)]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lowering.function(node)
    return fdef
