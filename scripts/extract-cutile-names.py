#!/usr/bin/env python3
"""Writes test/data/cutile_names.json: cuTile Python's public kernel-language
names and the parameters of its functions and Tile/Array methods, for
test/python/test_cutile_names.py (the acceptance test of issue 16).

Run once by hand against a git mirror of NVIDIA/cutile-python (no work tree
needed: files are read with `git show COMMIT:PATH`):

    python3 scripts/extract-cutile-names.py \
        --repo /work/.mirror/NVIDIA+cutile-python/repo --commit 9c3ee3c

Only names, parameter names/kinds/defaults and enum members are recorded:
facts about the interface, no code or documentation of cuTile. The source is
parsed with `ast`; nothing of cuTile is imported or run.
"""

import argparse
import ast
import json
import os
import subprocess
import sys

PKG = "src/cuda/tile"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Modules of `cuda.tile` whose exported names are classes of a kind the test
# checks differently from functions.
_KIND_BY_MODULE = {
    "_datatype": "dtype",
    "_exception": "error",
    "_memory_model": "enum",
    "_numeric_semantics": "enum",
}


def git_show(repo, commit, path):
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def module_path(module):
    """`cuda.tile._stub` -> src/cuda/tile/_stub.py (a package -> its __init__)."""
    rel = module.split(".")[2:]
    return "/".join([PKG] + rel) + ".py"


def default_text(node):
    return None if node is None else ast.unparse(node)


def params_of(fn, drop_self=False):
    """[{name, kind, default}] of an ast.FunctionDef, in order; kinds as in
    inspect.Parameter; default is the source text or null when required."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (p, d) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append({"name": p.arg, "kind": kind, "default": default_text(d)})
    if a.vararg:
        out.append({"name": a.vararg.arg, "kind": "VAR_POSITIONAL", "default": None})
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append({"name": p.arg, "kind": "KEYWORD_ONLY", "default": default_text(d)})
    if a.kwarg:
        out.append({"name": a.kwarg.arg, "kind": "VAR_KEYWORD", "default": None})
    if drop_self and out and out[0]["name"] in ("self", "cls"):
        out = out[1:]
    return out


def top_level(tree):
    """name -> the ast node that defines it at module level."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    found[t.id] = node
    return found


def is_property(fn):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)


def class_members(cls):
    """The documented methods and properties of a stub class."""
    members = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if node.name.startswith("_") and not (node.name.startswith("__")
                                              and node.name.endswith("__")):
            continue
        if node.name in ("__init__", "__repr__"):
            continue
        if is_property(node):
            members.append({"name": node.name, "kind": "property"})
        else:
            members.append({"name": node.name, "kind": "method",
                            "params": params_of(node, drop_self=True)})
    return members


def enum_members(cls):
    return [t.id for node in cls.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="/work/.mirror/NVIDIA+cutile-python/repo")
    ap.add_argument("--commit", default="9c3ee3c")
    ap.add_argument("--out", default=os.path.join(ROOT, "test", "data", "cutile_names.json"))
    opt = ap.parse_args()
    commit = subprocess.run(["git", "-C", opt.repo, "rev-parse", opt.commit], check=True,
                            capture_output=True, text=True).stdout.strip()
    subject = subprocess.run(["git", "-C", opt.repo, "log", "-1", "--format=%s", commit],
                             check=True, capture_output=True, text=True).stdout.strip()

    init_path = f"{PKG}/__init__.py"
    init = ast.parse(git_show(opt.repo, commit, init_path))
    exported = None
    source = {}  # name -> module it is imported from (None: a submodule)
    for node in init.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            exported = ast.literal_eval(node.value)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.module == "cuda.tile":  # `from cuda.tile import tune`
                    source[alias.asname or alias.name] = None
                else:
                    source[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                source[alias.asname or alias.name.rsplit(".", 1)[-1]] = None
    assert exported, "no __all__ in __init__.py"

    files = {init_path}
    trees = {}

    def tree_of(module):
        path = module_path(module)
        if path.endswith("_cext.py"):
            path += "i"  # the C extension's names are typed in its .pyi
        if path not in trees:
            trees[path] = top_level(ast.parse(git_show(opt.repo, commit, path)))
            files.add(path)
        return trees[path]

    names, methods = [], {}
    for name in exported:
        module = source.get(name)
        entry = {"name": name}
        if module is None:
            entry["kind"] = "module"
            names.append(entry)
            continue
        short = module.rsplit(".", 1)[-1]
        node = tree_of(module).get(name)
        if short in _KIND_BY_MODULE and not (short == "_datatype" and name == "DType"):
            entry["kind"] = _KIND_BY_MODULE[short]
            if entry["kind"] == "enum" and isinstance(node, ast.ClassDef):
                entry["members"] = enum_members(node)
        elif isinstance(node, ast.FunctionDef):
            entry["kind"] = "function"
            entry["params"] = params_of(node)
        elif isinstance(node, ast.ClassDef):
            entry["kind"] = "class"
            init_fn = next((n for n in node.body if isinstance(n, ast.FunctionDef)
                            and n.name == "__init__"), None)
            if name == "kernel" and init_fn is not None:  # a decorator class
                entry["kind"] = "function"
                entry["params"] = params_of(init_fn, drop_self=True)
            if name in ("Tile", "Array"):
                methods[name] = class_members(node)
        else:
            entry["kind"] = "annotation"  # a typing alias (Constant, ScalarInt64, ...)
        names.append(entry)

    data = {
        "provenance": {
            "repo": "NVIDIA/cutile-python",
            "commit": commit,
            "commit_subject": subject,
            "files": sorted(files),
            "note": ("The spec names cuda.tile 1.7; the newest commit of the mirror used "
                     "is the v1.6 release notes. Generated by "
                     "scripts/extract-cutile-names.py: names, parameter names, kinds "
                     "and defaults (source text) only."),
        },
        "names": names,
        "methods": methods,
    }
    os.makedirs(os.path.dirname(opt.out), exist_ok=True)
    with open(opt.out, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"{opt.out}: {len(names)} names, "
          + ", ".join(f"{k}: {len(v)} members" for k, v in methods.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
