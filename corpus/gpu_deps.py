"""Which CUDA-only code the training path really needs: one evidence line per use site.

A use site is an import of a CUDA-only package (apex, flash_attn, ...), of Triton or numba.cuda,
of a compiled extension module declared in the repository (`CUDAExtension("name", ...)`), or a
call that compiles or loads one at run time (`cpp_extension.load(...)`,
`torch.ops.load_library(...)`, the callee resolved through the module's imports). Each site
gets one status:

  hard          module-level and unguarded, in a file the training entry point loads
                unconditionally (the entry's static import closure over such imports)
  guarded       inside try/except (ImportError, Exception or bare): a fallback exists
  conditional   inside an `if` or a function body: only some configurations load it (an
                `if/elif/else` whose every branch imports is a switch: unconditional); a
                `torch.ops.load_library` whose nearest setup.py also builds for CPU
  off_path      in a file the training entry never loads (evaluation, tools, other scripts)
  declared      named in a dependency file but imported nowhere

Tier 3 means at least one `hard` site. The analysis is static (Python's `ast`), never runs code,
and over-approximates the import closure (an ambiguous module name reaches every candidate).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from gpu2tpu.corpus import patterns

STATUSES = ("hard", "guarded", "conditional", "off_path", "declared")
MAX_EVIDENCE_PER_KIND = 3  # evidence lines kept per (name, status)
_EXT_DECL = re.compile(r"\b(?:CUDAExtension|CppExtension|[Ee]xtension|create_extension)\s*\("
                       r"\s*(?:name\s*=\s*)?['\"]([\w\.]+)['\"]")
_GUARD_EXC = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError",
              "RuntimeError"}


@dataclass(frozen=True)
class Site:
    """One place CUDA-only code is used."""

    name: str  # canonical package, "triton", "numba_cuda" or "kernel:<module>"
    file: str
    line: int
    context: str  # "module", "try", "if", "def"
    code: str


@dataclass
class _Import:
    module: str  # dotted, absolute after resolution of relative imports
    names: tuple[str, ...]  # for `from m import a, b`
    line: int
    context: str
    dynamic: bool = False  # a dotted string, not an import statement


def _context(stack: list[ast.AST], main_guard_ok: bool) -> str:
    """The innermost reason a statement might not run at import time."""
    ctx = "module"
    for node in stack:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return "def"
        if isinstance(node, ast.Try) and ctx == "module":
            ctx = "try"
        if isinstance(node, ast.If) and ctx == "module":
            if not (main_guard_ok and _is_main_guard(node)) and not _is_switch(node):
                ctx = "if"
    return ctx


def _is_switch(node: ast.If) -> bool:
    """`if/elif/else` whose every branch imports: one of the imports always runs (a configuration
    switch between implementations), so the imports count as unconditional (over-approximation:
    a dependency of any branch counts)."""
    branches: list[list[ast.stmt]] = []
    cur = node
    while True:
        branches.append(cur.body)
        if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
            cur = cur.orelse[0]
            continue
        if not cur.orelse:
            return False
        branches.append(cur.orelse)
        break
    return all(any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in b) for b in branches)


def _is_main_guard(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name)
            and t.left.id == "__name__")


def _catches_import_errors(node: ast.Try) -> bool:
    """A real guard: some handler catches import errors and does not re-raise or exit."""
    for h in node.handlers:
        types = [] if h.type is None else (h.type.elts if isinstance(h.type, ast.Tuple)
                                           else [h.type])
        if h.type is not None and not any(isinstance(t, ast.Name) and t.id in _GUARD_EXC
                                          for t in types):
            continue
        if not any(_stops(stmt) for stmt in h.body):
            return True
    return False


def _stops(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in ("exit", "_exit", "quit")
    return False


_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,}$")
_FLASH_KWARGS = {("attn_implementation", "flash_attention_2"), ("use_flash_attention_2", True)}


class _Visitor(ast.NodeVisitor):
    def __init__(self, package: str, is_root: bool) -> None:
        self.package = package
        self.is_root = is_root
        self.stack: list[ast.AST] = []
        self.imports: list[_Import] = []
        self.calls: list[tuple[str, int, str]] = []  # (site name, line, context)
        self.bound: dict[str, str] = {}  # local name -> dotted module/attribute it is bound to
        self.callees: list[tuple[str, int, str]] = []  # (dotted callee as written, line, ctx)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Try):
            guard = _catches_import_errors(node)
            if guard:
                self.stack.append(node)
            for stmt in node.body + node.orelse:
                self.visit(stmt)
            if guard:
                self.stack.pop()
            # handlers run when the guarded import fails (as on a machine without CUDA)
            for part in [*node.handlers, *node.finalbody]:
                self.visit(part)
            return
        self.stack.append(node)
        super().generic_visit(node)
        self.stack.pop()

    def _ctx(self) -> str:
        return _context(self.stack, self.is_root)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(_Import(alias.name, (), node.lineno, self._ctx()))
            head = alias.name.split(".")[0]
            self.bound[alias.asname or head] = alias.name if alias.asname else head

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".") if self.package else []
            parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
            base = ".".join([*parts, base] if base else parts)
        names = tuple(a.name for a in node.names if a.name != "*")
        self.imports.append(_Import(base, names, node.lineno, self._ctx()))
        for a in node.names:
            self.bound[a.asname or a.name] = f"{'.' * node.level}{base}.{a.name}"

    def visit_Constant(self, node: ast.Constant) -> None:
        # "pkg.module.Class" strings: registries and import_module() calls load code by name
        if isinstance(node.value, str) and _DOTTED.match(node.value):
            self.imports.append(_Import(node.value, (), node.lineno, self._ctx(), dynamic=True))

    def visit_Call(self, node: ast.Call) -> None:
        if callee := patterns.dotted(node.func):  # resolved once the module's imports are known
            self.callees.append((callee, node.lineno, self._ctx()))
        for k in node.keywords:
            if isinstance(k.value, ast.Constant) and (k.arg, k.value.value) in _FLASH_KWARGS:
                # a keyword picks one of transformers' attention implementations ("sdpa" and
                # "eager" need no CUDA): a configuration choice, so at most conditional
                ctx = self._ctx()
                self.calls.append(("flash_attn", node.lineno, "if" if ctx == "module" else ctx))
        self.generic_visit(node)


@dataclass
class _File:
    path: str
    module: str
    imports: list[_Import]
    sites: list[Site]


def _base_dir(path: str, mod: str) -> str:
    """The folder on sys.path from which `path` is importable as `mod`."""
    p = PurePosixPath(path)
    drop = mod.count(".") + (2 if p.name == "__init__.py" else 1)
    parts = p.parts[: max(0, len(p.parts) - drop)]
    return "/".join(parts) or "."


def _module_name(path: str) -> str:
    p = PurePosixPath(path)
    parts = list(p.parent.parts) + ([] if p.stem == "__init__" else [p.stem])
    return ".".join(parts)


def _parse(path: str, text: str, ext_modules: set[str], is_root: bool) -> _File | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    module = _module_name(path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    v = _Visitor(package, is_root)
    v.visit(tree)
    lines = text.splitlines()

    def code(n: int) -> str:
        return lines[n - 1].strip()[:120] if 0 < n <= len(lines) else ""

    sites: list[Site] = []
    for imp in v.imports:
        if imp.dynamic:
            continue
        for mod in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)):
            name = _site_name(mod, ext_modules)
            if name:
                sites.append(Site(name, path, imp.line, imp.context, code(imp.line)))
                break
    calls = [(site, n, ctx) for callee, n, ctx in v.callees
             if (site := patterns.compile_call_site(callee, v.bound))]
    sites.extend(Site(name, path, n, ctx, code(n)) for name, n, ctx in [*calls, *v.calls])
    return _File(path, module, v.imports, sites)


def _site_name(mod: str, ext_modules: set[str]) -> str | None:
    if dep := patterns.cuda_deps_of_name(mod):
        return dep
    head = mod.split(".")[0]
    if head == "triton":
        return "triton"
    if mod.startswith("numba.cuda"):
        return "numba_cuda"
    if mod in ext_modules or mod.split(".")[-1] in ext_modules:
        return f"kernel:{mod.split('.')[-1]}"
    return None


_LISTS_FOLDER = re.compile(r"\b(glob|listdir|iterdir|scandir|iter_modules|walk_packages)\b")


class Resolver:
    """Maps dotted module names to repository files (over-approximating ambiguous names)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = set(paths)
        self.by_suffix: dict[str, list[str]] = {}
        for path in sorted(self.paths):
            mod = _module_name(path)
            parts = mod.split(".") if mod else []
            for i in range(len(parts)):
                self.by_suffix.setdefault(".".join(parts[i:]), []).append(path)

    def resolve(self, mod: str, importer: str, root_dirs: set[str]) -> list[str]:
        """Files `import mod` may load: those under a folder Python would search (the importer's
        folders, the entry scripts' folders, the root); else, for dotted names, any match
        (projects extend sys.path); a one-word name must be near."""
        hits = self.by_suffix.get(mod, [])
        here = PurePosixPath(importer).parent
        near = {str(p) for p in [here, *here.parents]} | root_dirs
        close = [h for h in hits if _base_dir(h, mod) in near]
        return close or (hits if "." in mod else [])

    def targets(self, imp: _Import, importer: str, root_dirs: set[str]) -> list[str]:
        found = list(self.resolve(imp.module, importer, root_dirs))
        for n in imp.names:
            found += self.resolve(f"{imp.module}.{n}", importer, root_dirs)
        if imp.dynamic and not found:  # "pkg.module.Class": the module holding the attribute
            found = self.resolve(imp.module.rpartition(".")[0], importer, root_dirs)
        return found

    def with_packages(self, path: str) -> list[str]:
        """The file plus the `__init__.py` of every package above it (Python runs those too)."""
        out = [path]
        parent = PurePosixPath(path).parent
        while str(parent) != ".":
            init = f"{parent}/__init__.py"
            if init in self.paths and init != path:
                out.append(init)
            parent = parent.parent
        return out


def analyse(py_texts: dict[str, str], declared: Iterable[str], roots: list[str],
            config_modules: Iterable[str] = ()) -> list[dict[str, Any]]:
    return analyse_paths(py_texts, declared, roots, config_modules)[0]


def analyse_paths(py_texts: dict[str, str], declared: Iterable[str], roots: list[str],
                  config_modules: Iterable[str] = ()) -> tuple[list[dict[str, Any]], set[str]]:
    """Evidence for every CUDA-only use site: dicts {name, status, where, code[, via]}, sorted.

    `py_texts`: path -> source of every Python file; `declared`: CUDA-only package names found
    in dependency files; `roots`: training entry scripts (empty: every file counts as loaded);
    `config_modules`: dotted names the training configuration loads by name. Also returns the
    files the training entry may load (its import closure).
    """
    ext_modules = {m for text in py_texts.values() for m in cuda_extension_modules(text)}
    files: dict[str, _File] = {}
    for path, text in py_texts.items():
        parsed = _parse(path, text, ext_modules, path in roots)
        if parsed is not None:
            files[path] = parsed
    _add_folder_imports(files, py_texts)
    parent, reachable = _closures(files, roots, list(config_modules))
    # setup.py folder -> it builds its extensions without CUDA too (CppExtension fallback)
    cpu_builds = {str(PurePosixPath(p).parent): patterns.builds_without_cuda(t)
                  for p, t in py_texts.items() if PurePosixPath(p).name == "setup.py"}
    evidence: list[dict[str, Any]] = []
    used: set[str] = set()
    for f in sorted(files.values(), key=lambda f: f.path):
        for s in f.sites:
            used.add(s.name)
            cpu_lib = s.name == "torch.ops.load_library" and next(  # nearest setup.py above
                (cpu_builds[str(d)] for d in PurePosixPath(f.path).parents if str(d) in cpu_builds),
                False)
            if s.context == "try":
                status = "guarded"
            elif f.path not in reachable:
                status = "off_path"
            elif s.context in ("if", "def") or f.path not in parent or cpu_lib:
                status = "conditional"
            else:
                status = "hard"
            item = {"name": s.name, "status": status, "where": f"{s.file}:{s.line}",
                    "code": s.code}
            if status == "hard" and roots:
                item["via"] = " -> ".join(_chain(parent, f.path))
            evidence.append(item)
    for name in sorted(set(declared) - used):
        evidence.append({"name": name, "status": "declared", "where": "", "code": ""})
    return _trim(evidence), reachable


def _chain(parent: dict[str, str | None], path: str) -> list[str]:
    out = [path]
    while (up := parent.get(out[-1])) and up not in out and len(out) < 12:
        out.append(up)
    return out[::-1]


def _closures(files: dict[str, _File], roots: list[str], config_modules: list[str]
              ) -> tuple[dict[str, str | None], set[str]]:
    """(file -> the file that loads it, for files loaded unconditionally; files loaded on some
    path) from the training roots. Without roots every file counts as loaded."""
    resolver = Resolver(files)
    if not roots:
        return dict.fromkeys(files), set(files)
    root_dirs = {str(PurePosixPath(r).parent) for r in roots}
    parent: dict[str, str | None] = {}
    reachable: set[str] = set()
    todo: list[tuple[str, bool, str | None]] = [(r, True, None) for r in roots if r in files]
    for mod in config_modules:  # named by the training configuration: loaded from the root
        imp = _Import(mod, (), 0, "module", dynamic=True)
        todo += [(t, True, roots[0]) for t in resolver.targets(imp, roots[0], root_dirs)]
    while todo:
        path, hard, up = todo.pop(0)  # breadth first: the shortest chain is kept
        if path in parent or (not hard and path in reachable):
            continue
        reachable.add(path)
        if hard:
            parent[path] = up
        for imp in files[path].imports:
            for t in resolver.targets(imp, path, root_dirs):
                for p in resolver.with_packages(t):
                    if p in files:
                        todo.append((p, hard and imp.context == "module", path))
    return parent, reachable


def _add_folder_imports(files: dict[str, _File], py_texts: dict[str, str]) -> None:
    """A package whose __init__.py imports its folder's modules by listing it (glob or listdir
    of its __file__'s folder, then import_module or a computed __all__) imports every module there."""
    for f in files.values():
        text = py_texts.get(f.path, "")
        if not (f.path.endswith("__init__.py") and "__file__" in text and _LISTS_FOLDER.search(text)):
            continue
        folder = str(PurePosixPath(f.path).parent)
        names = tuple(sorted(PurePosixPath(p).stem for p in files
                             if str(PurePosixPath(p).parent) == folder and p != f.path))
        if names:
            f.imports.append(_Import(f.module, names, 1, "module"))


def _trim(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the first few lines per (name, status); order: hard first, then by name and place."""
    rank = {s: i for i, s in enumerate(STATUSES)}
    evidence.sort(key=lambda e: (rank[e["status"]], e["name"], e["where"]))
    kept: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    for e in evidence:
        key = (e["name"], e["status"])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= MAX_EVIDENCE_PER_KIND:
            kept.append(e)
    return kept


def cuda_extension_modules(text: str) -> set[str]:
    """Last names of the extension modules a setup script builds, when it builds CUDA code."""
    if "xtension" not in text:
        return set()
    if ("CUDAExtension" not in text and "with_cuda" not in text
            and not re.search(r"\.cu['\"]", text)):
        return set()
    return {m.split(".")[-1] for m in _EXT_DECL.findall(text)}


def hard_names(evidence: list[dict[str, Any]]) -> list[str]:
    return sorted({e["name"] for e in evidence if e["status"] == "hard"})
