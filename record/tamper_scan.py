"""Static scan of the lines a migration adds, for what a GPU->TPU migration never needs and an attack
on the in-process probe does: walking the heap or frames for the probe's objects, the trace
channel's descriptor, tracing and native-code hooks, rebinding what the probe hooks, and the
obfuscation that hides them (RULES: patterns -> what it is -> why a migration never needs it).

The harness scans the prediction's patch before the candidate runs and keeps the result as the
evaluation's scan.json (hashed with its other files); each finding is a `tampered` line of the runs
criterion, source `static-scan`, quoting the added line. Only added lines are read; a line whose
text the original tree already holds is kept, not added. Comments never match, strings do. A cheap
first layer: a determined attacker can evade a static scan (docs/design.md, Threat model)."""

from __future__ import annotations

import ast
import codecs
import re
from pathlib import Path
from typing import Any

from gpu2tpu.record import tamper_rules as rules
from gpu2tpu.record.report import SCAN_SCHEMA

SOURCE = "static-scan"


def added_lines(patch: str) -> dict[str, set[int]]:
    """{new path: line numbers in the new file} for every line a unified (git) diff adds."""
    out: dict[str, set[int]] = {}
    path, new_no, old_left, new_left = None, 0, 0, 0
    for line in patch.split("\n"):  # git's lines: a CRLF line keeps its \r, a lone \r splits nothing
        if old_left > 0 or new_left > 0:
            tag = line[:1]
            if tag in (" ", ""):
                old_left, new_left, new_no = old_left - 1, new_left - 1, new_no + 1
            elif tag == "-":
                old_left -= 1
            elif tag == "+":
                if path is not None:
                    out.setdefault(path, set()).add(new_no)
                new_left, new_no = new_left - 1, new_no + 1
        elif line.startswith("+++ "):
            name = line[4:].rstrip("\t")
            if name.startswith('"'):  # git quotes unusual names C-style
                name = codecs.decode(name[1:-1], "unicode_escape").encode("latin-1").decode(errors="replace")
            path = None if name == "/dev/null" else name.split("/", 1)[-1]
        elif m := re.match(r"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line):
            old_left, new_no, new_left = int(m[1] or 1), int(m[2]), int(m[3] or 1)
    return out


def scan_patch(patch: str, project: Path, original: Path | None = None) -> dict[str, Any]:
    """scan.json's content: findings in `project` (the migrated tree) on the lines `patch` adds that
    neither the original tree nor the patch's removed lines already hold."""
    added = added_lines(patch)
    kept = {ln[1:].strip() for ln in patch.split("\n") if ln.startswith("-") and not ln.startswith("---")}
    if original is not None:
        for src in [*original.rglob("*.py"), *(original / p for p in added)]:
            if src.is_file() and not src.is_symlink() and src.stat().st_size < (4 << 20):
                kept.update(x.strip() for x in _git_lines(src))
    findings: list[dict[str, Any]] = []
    count = 0
    for rel, numbers in sorted(added.items()):
        path = project / rel
        if path.is_symlink() or not path.is_file() or rel.lower().endswith(rules.DOCS):
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")  # no newline translation
        lines = text.split("\n")  # numbered as the patch numbers them
        fresh = {n for n in numbers if 0 < n <= len(lines) and lines[n - 1].strip() not in kept}
        count += len(fresh)
        python = rel.endswith((".py", ".pyw")) or bool(lines and re.match(r"#!.*python", lines[0]))
        found = None
        if python and fresh and len(text) < (4 << 20):
            owner = _python_line_owners(lines)
            found = _Scan(text, {k for k, n in enumerate(owner, 1) if n in fresh}).run()
            found = None if found is None else [(owner[k - 1], rule, d) for k, rule, d in found]
        for line, rule, detail in sorted(set(found if found is not None else _scan_text(lines, fresh))):
            if not any(f["line"] == line and f["rule"] == rule and f["file"] == rel for f in findings):
                findings.append({"file": rel, "line": line, "code": lines[line - 1].strip()[:200],
                                 "rule": rule, "detail": detail, "what": rules.BY_ID[rule].what,
                                 "why": rules.BY_ID[rule].why})
    return {"schema_version": SCAN_SCHEMA, "source": SOURCE, "files": len(added), "added_lines": count,
            "findings": findings}


def _git_lines(path: Path) -> list[str]:
    """A file's lines as git numbers them (split at \\n only, a CRLF line keeps its \\r)."""
    return path.read_bytes().decode("utf-8", errors="replace").split("\n")


def _python_line_owners(lines: list[str]) -> list[int]:
    """For each line as Python numbers it, the git line holding it: Python also ends a line at a
    lone \\r, so code after one inside an added line is scanned under that line's number."""
    owner: list[int] = []
    for number, line in enumerate(lines, 1):
        body = line[:-1] if line.endswith("\r") else line  # a CRLF ending is one line end
        owner += [number] * (1 + body.count("\r"))
    return owner


def _scan_text(lines: list[str], fresh: set[int]) -> list[tuple[int, str, str]]:
    """Files that are not Python (or do not parse): names and paths on added lines, comments cut."""
    out = []
    for n in sorted(fresh):
        code = re.sub(r"(^|\s)#.*", "", lines[n - 1])
        out += [(n, rule, hit) for rule, hit in _string_hits(code)]
        out += [(n, rule, name) for name, rule in rules.NAMES if re.search(re.escape(name) + r"\b", code)]
    return out


def _string_hits(value: str) -> list[tuple[str, str]]:
    hits = [("proc-fd", value[:80]) for rx in rules.PROC if rx.search(value)][:1]
    if value in rules.ATTRS or rules.HARNESS.search(value):
        hits.append((rules.ATTRS.get(value, "probe-names"), value[:80]))
    return hits


class _Scan:
    """One Python file: names resolved through its imports and simple aliases, then every node that
    touches an added line checked."""

    def __init__(self, text: str, fresh: set[int]) -> None:
        self.text, self.fresh = text, fresh
        self.alias: dict[str, str] = {}
        self.opened: set[str] = set()  # names bound to descriptors this file opened
        self.folded: dict[int, str | None] = {}  # fold() of each node once: linear in the file
        self.out: list[tuple[int, str, str]] = []

    def run(self) -> list[tuple[int, str, str]] | None:
        try:
            nodes = list(ast.walk(ast.parse(self.text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in nodes:
            if isinstance(node, ast.Import):
                self.alias.update((a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2
                                  for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.alias.update((a.asname or a.name, f"{node.module}.{a.name}") for a in node.names)
        for node in sorted((n for n in nodes if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
            value, opens = self.resolve(node.value), isinstance(node.value, ast.Call) and \
                self.callee(node.value) in rules.OPENERS
            if value and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.alias[node.targets[0].id] = value
            self.opened.update(n.id for t in node.targets for n in ast.walk(t)
                               if opens and isinstance(n, ast.Name))
        try:
            for node in nodes:
                self.visit(node)
        except RecursionError:  # nested past what a scan follows: read it as text instead
            return None
        return self.out

    def hit(self, node: ast.AST, rule: str, detail: str) -> None:
        start = getattr(node, "lineno", 0)
        line = next((n for n in range(start, (getattr(node, "end_lineno", 0) or start) + 1)
                     if n in self.fresh), None)
        if line is not None:
            self.out.append((line, rule, detail))

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (`g.get_objects` after `import gc as g`,
        `__import__('gc')`, `getattr(os, 'du' + 'p2')`, `sys.modules['torch']`), else None."""
        if isinstance(node, ast.Name):
            return self.alias.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and node.args:
            fn, first = self.callee(node), self.fold(node.args[0])
            if fn in ("__import__", "importlib.import_module", "sys.modules.get"):
                return first
            if fn == "getattr" and len(node.args) > 1:
                base, name = self.resolve(node.args[0]), self.fold(node.args[1])
                return f"{base}.{name}" if base and name else None
        if isinstance(node, ast.Subscript) and self.resolve(node.value) == "sys.modules":
            return self.fold(node.slice)
        return None

    def callee(self, call: ast.Call) -> str | None:
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("object",
                                                                                            "type"):
            return f"{f.value.id}.{f.attr}"
        return self.resolve(f) or (f.id if isinstance(f, ast.Name) else None)

    def fold(self, node: ast.AST) -> str | None:
        """The string an expression built only from literals evaluates to (names are hidden in
        short strings: a computed one over 1000 characters counts as none), else None."""
        if id(node) not in self.folded:
            try:
                out = self._fold(node)
            except Exception:
                out = None
            self.folded[id(node)] = out if isinstance(node, ast.Constant) or out is None or \
                len(out) <= 1000 else None
        return self.folded[id(node)]

    def _fold(self, node: ast.AST) -> str | None:
        fold = self.fold
        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, str) else v.decode("latin-1") if isinstance(v, bytes) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            a, b = fold(node.left), fold(node.right)
            if isinstance(node.op, ast.Add):
                return a + b if a is not None and b is not None else None
            n = node.right if a is not None else node.left
            count = n.value if isinstance(n, ast.Constant) and type(n.value) is int else 10**6
            return (a or b or "") * count if count <= 1000 else None
        if isinstance(node, ast.JoinedStr):
            parts = [fold(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
            return "".join(p for p in parts if p is not None) if None not in parts else None
        if isinstance(node, ast.Subscript):
            s, sl = fold(node.value), node.slice
            if s is None or len(s) > 1000:
                return None
            if isinstance(sl, ast.Slice):
                return s[slice(*(ast.literal_eval(x) if x else None for x in (sl.lower, sl.upper, sl.step)))]
            return s[ast.literal_eval(sl)]
        if not isinstance(node, ast.Call):
            return None
        fn, args = self.callee(node), [fold(a) for a in node.args]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args and \
                isinstance(node.args[0], (ast.List, ast.Tuple)):
            args = [fold(e) for e in node.args[0].elts]
        if fn == "chr" and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is int:
            return chr(node.args[0].value)
        strs = [a for a in args if a is not None]
        if len(strs) < len(args) or sum(map(len, strs)) > 1000:
            return None
        if fn in rules.DECODERS:
            return rules.DECODERS[fn](strs[0]).decode("latin-1")
        if fn == "codecs.decode" and strs[1:] in (["rot13"], ["rot_13"]):
            return str(codecs.decode(strs[0], "rot13"))
        if isinstance(node.func, ast.Attribute) and node.func.attr in rules.STR_METHODS:
            base = fold(node.func.value)
            if base is None or len(base) > 1000:
                return None
            out = getattr(base, node.func.attr)(*strs) if node.func.attr != "join" else base.join(strs)
            return out.decode("latin-1") if isinstance(out, bytes) else out
        return None

    def computed(self, node: ast.AST) -> bool:
        """A string built from pieces (it folds but is not one literal), or unpacked data."""
        return not isinstance(node, ast.Constant) and (self.fold(node) is not None or any(
            isinstance(n, ast.Call) and self.callee(n) in rules.UNPACKERS for n in ast.walk(node)))

    def fd_ok(self, node: ast.AST) -> bool:
        """0, 1, 2, `x.fileno()`, a call that opens one, or a name this file bound from one."""
        if isinstance(node, ast.Constant):
            return node.value in (0, 1, 2)
        if isinstance(node, ast.Call):
            return (isinstance(node.func, ast.Attribute) and node.func.attr == "fileno") or \
                self.callee(node) in rules.OPENERS
        return isinstance(node, ast.Name) and node.id in self.opened

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call, ast.Subscript)):
            for rule, detail in _string_hits(self.fold(node) or ""):  # literals and strings from pieces
                self.hit(node, rule, detail)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                self.names(node, a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}")
        elif isinstance(node, (ast.Name, ast.Attribute)):
            self.names(node, self.resolve(node))
            ident = node.id if isinstance(node, ast.Name) else node.attr
            if ident in rules.IDENTS or rules.HARNESS.search(ident):
                self.hit(node, rules.IDENTS.get(ident, "probe-names"), ident)
        elif isinstance(node, ast.Call):
            self.call(node, self.callee(node), node.args)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in (x for target in targets for x in ast.walk(target)
                      if isinstance(getattr(x, "ctx", None), (ast.Store, ast.Del))):
                if isinstance(t, ast.Attribute):
                    self.rebind(t, self.resolve(t.value), t.attr)
                elif isinstance(t, ast.Subscript) and self.resolve(t.value) == "sys.modules":
                    key = self.fold(t.slice) or ""
                    if not key or key.split(".")[0] in (*rules.OWNERS, "gc", "os", "sys", "builtins"):
                        self.hit(t, "module-table", f"sys.modules[{key or '<computed>'!r}] replaced")
                elif isinstance(t, ast.Subscript):  # vars(torch.x)[name] = ..., torch.x.__dict__[name]
                    v = t.value
                    owner = self.resolve(v.value) if isinstance(v, ast.Attribute) and v.attr == "__dict__" \
                        else self.resolve(v.args[0]) if isinstance(v, ast.Call) and v.args and \
                        self.callee(v) == "vars" else None
                    self.rebind(t, owner, self.fold(t.slice))
        elif isinstance(node, (ast.For, ast.comprehension)) and self.resolve(node.iter) == "sys.modules":
            self.hit(node.iter, "module-table", "iterates sys.modules")
        elif isinstance(node, ast.Subscript) and self.resolve(node.value) == "sys.modules" and not (
                isinstance(node.slice, ast.Constant) or ast.unparse(node.slice) == "__name__"):
            self.hit(node, "obfuscation" if self.fold(node.slice) else "module-table",
                     "sys.modules[computed]")

    def names(self, node: ast.AST, name: str | None) -> None:
        if not name:
            return
        for pattern, rule in rules.NAMES:
            if name == pattern or name.startswith(pattern + "."):
                self.hit(node, rule, name)
        if rules.HARNESS.search(name):
            self.hit(node, "probe-names", name)

    def rebind(self, node: ast.AST, base: str | None, attr: str | None) -> None:
        """An assignment to `base.attr` (attr None: a computed name)."""
        if attr == "__code__":
            self.hit(node, "rebinds-hooked", "assigns __code__")
        elif base and (base.startswith(rules.READ_BY_PROBE) or (base.split(".")[0] in rules.OWNERS and (
                attr is None or attr in rules.HOOKED))):
            self.hit(node, "rebinds-hooked", f"{base}.{attr or '<computed>'}")

    def call(self, node: ast.Call, fn: str | None, args: list[ast.expr]) -> None:
        if fn in rules.FD_ARGS:
            bad = [i for i in rules.FD_ARGS[fn] if i < len(args) and not self.fd_ok(args[i])]
            if bad:
                self.hit(node, "raw-fd", f"{fn}({ast.unparse(args[bad[0]])})")
        elif fn == "os.closerange" or (fn in ("open", "io.open", "io.FileIO") and args and (
                isinstance(args[0], ast.Constant) and type(args[0].value) is int and args[0].value > 2
                or isinstance(args[0], ast.Call) and self.callee(args[0]) == "int")):
            self.hit(node, "raw-fd", f"{fn}({ast.unparse(args[0]) if args else ''})")
        elif fn == "__import__" and args and not isinstance(args[0], ast.Constant):
            self.hit(node, "obfuscation", f"__import__({ast.unparse(args[0])})")
        elif fn in ("importlib.import_module", "getattr", "setattr", "hasattr", "delattr") and args:
            name = args[0] if fn == "importlib.import_module" else args[1] if len(args) > 1 else None
            if name is not None and self.computed(name):
                self.hit(node, "obfuscation", f"{fn}(..., {self.fold(name) or ast.unparse(name)!r})")
        elif fn in ("exec", "eval", "compile") and args and (self.fold(args[0]) is not None
                                                              or self.computed(args[0])):
            self.hit(node, "obfuscation", f"{fn} of a string held in the code")
        elif fn == "codecs.decode" and len(args) > 1 and (self.fold(args[1]) or "").replace("_", "") \
                == "rot13":
            self.hit(node, "obfuscation", "rot13")
        elif fn in ("list", "tuple", "set", "dict", "sorted", "iter", "enumerate") and args and \
                self.resolve(args[0]) == "sys.modules":
            self.hit(node, "module-table", f"{fn}(sys.modules)")
        if fn in ("setattr", "delattr", "object.__setattr__", "type.__setattr__") and len(args) > 1:
            self.rebind(node, self.resolve(args[0]), self.fold(args[1]))
