"""The `naive` baseline's source transformation: what a careless GPU-to-TPU port of one Python file
does, and nothing more. Read with `ast`, edited as text at the nodes' own positions (everything else
in the file keeps its bytes):

- `X.cuda(...)` becomes `X.to(torch_xla.device())` (its arguments dropped);
- `torch.device(...)` naming CUDA (`"cuda"`, `"cuda:0"`, `"cuda", 0`, `f"cuda:{i}"`, or a
  conditional with such a branch) becomes `torch_xla.device()`;
- a CUDA device string (or `"cuda" if ... else "cpu"`) where a device is expected becomes
  `torch_xla.device()`: an argument of `.to(...)`, a `device=` / `map_location=` keyword, the
  `default=` of `add_argument`, the value of an assignment or a `return`, a parameter's default.
  Elsewhere (`device.type == "cuda"`, `torch.autocast("cuda")`, a list of choices) it stays;
- any other `torch.cuda.is_available()` becomes `True`: the accelerator the code asked about is
  there, so the code it guards (its `.cuda()` calls, now XLA) runs;
- `torch_xla.sync()` after every statement that steps an optimizer: `<optimizer>.step(...)`,
  where the receiver's name holds `optim` or is `opt` (`optimizer`, `self.optimizer_G`,
  `model_optim`, `optimiser`, `opt`), and `<scaler>.step(<optimizer>)` of a GradScaler (the
  optimizer step of AMP code, so handled the same way; the scaler itself is left as it is);
- `import torch_xla` once, after the file's `import torch` (else after its docstring and
  `__future__` imports) when the file uses it and does not already import it.

No AMP or GradScaler changes, no data loader changes, no per-project cases.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

XLA_DEVICE = "torch_xla.device()"
SYNC = "torch_xla.sync()"
IMPORT = "import torch_xla"
_CUDA = re.compile(r"cuda(:\d+)?")
_CUDA_PREFIX = re.compile(r"cuda:")
_OPTIMIZER = re.compile(r"optim|(^|_)opt(\d*|_.*)$", re.IGNORECASE)
_DEVICE_KEYWORDS = ("device", "map_location")


class NaivePortError(ValueError):
    """The file cannot be transformed (not Python 3, or the edit would not parse): left as it is."""


@dataclass
class Edit:
    start: int  # character offsets into the source
    end: int
    text: str
    rule: str


@dataclass
class Ported:
    text: str
    rules: list[str] = field(default_factory=list)  # one per edit made, in source order

    @property
    def changed(self) -> bool:
        return bool(self.rules)


class _Source:
    def __init__(self, text: str) -> None:
        if re.search("\r(?!\n)", text):
            raise NaivePortError("a lone carriage return (old Mac line ends): positions would not match")
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def offset(self, lineno: int, col: int) -> int:
        """ast positions count UTF-8 bytes within a line; the edits count characters."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:col].decode(errors="ignore"))

    def span(self, node: Any) -> tuple[int, int]:
        """An expression's or statement's characters (nodes without positions are never edited)."""
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def line_end(self, lineno: int) -> int:
        """Offset just before line `lineno`'s end (its \\r\\n or \\n, or the end of the text)."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line) - (1 if line.endswith("\r") else 0)

    def eol(self, lineno: int) -> str:
        """The line's own ending; the file's for a last line that has none."""
        line = self.lines[lineno - 1]
        if lineno == len(self.lines):
            return "\r\n" if "\r\n" in self.text else "\n"
        return "\r\n" if line.endswith("\r") else "\n"

    def indent(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[:len(line) - len(line.lstrip(" \t"))]

    def alone_on_line(self, node: ast.stmt) -> bool:
        """The statement starts its line and only a comment (or nothing) follows it there."""
        start, end = self.span(node)
        first = self.starts[node.lineno - 1]
        rest = self.text[end:self.line_end(node.end_lineno or node.lineno)].strip()
        return not self.text[first:start].strip() and (not rest or rest.startswith("#"))


def naive_port(text: str) -> Ported:
    """The careless port of one file's source (unchanged text and no rules when nothing applies)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        raise NaivePortError(f"not Python 3 source ({exc.__class__.__name__}: {exc})") from exc
    src = _Source(text)
    torch = _torch_names(tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    edits: list[Edit] = []
    for node in ast.walk(tree):
        edit = _device_edit(node, parents, torch, src)
        if edit is not None:
            edits.append(edit)
        if isinstance(node, ast.Expr) and _steps_optimizer(node.value):
            edits.append(_after(node, src, SYNC, "sync after optimizer step"))
    edits = _outermost(edits)
    if not edits:
        return Ported(text)
    if not _imports_torch_xla(tree):
        edits.append(_import_edit(tree, src))
    out = text
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[:e.start] + e.text + out[e.end:]
    try:
        ast.parse(out)
    except SyntaxError as exc:  # a layout this module does not handle: better no edit than a broken one
        raise NaivePortError(f"the edited file would not parse (line {exc.lineno}): left unchanged") from exc
    return Ported(out, [e.rule for e in sorted(edits, key=lambda e: e.start)])


def _torch_names(tree: ast.Module) -> set[str]:
    names = {"torch"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname for a in node.names if a.name == "torch" and a.asname}
    return names


def _device_edit(node: ast.AST, parents: dict[ast.AST, ast.AST], torch: set[str],
                 src: _Source) -> Edit | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        func = node.func
        if func.attr == "cuda" and not (isinstance(func.value, ast.Name) and func.value.id in torch):
            return Edit(src.span(func.value)[1], src.span(node)[1], f".to({XLA_DEVICE})", ".cuda()")
        if _is_device_ctor(node, torch) and _names_cuda(node, torch):
            return Edit(*src.span(node), XLA_DEVICE, "torch.device(cuda)")
        if _is_cuda_available(node, torch):
            return Edit(*src.span(node), "True", "torch.cuda.is_available()")
    if _is_cuda_device(node, torch) and _device_position(node, parents):
        return Edit(*src.span(node), XLA_DEVICE,
                    "cuda if/else device" if isinstance(node, ast.IfExp) else "cuda device string")
    return None


def _is_device_ctor(node: ast.Call, torch: set[str]) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "device"
            and isinstance(func.value, ast.Name) and func.value.id in torch)


def _names_cuda(call: ast.Call, torch: set[str]) -> bool:
    return any(_is_cuda_device(a, torch) for a in [*call.args, *(k.value for k in call.keywords)])


def _is_cuda_available(node: ast.Call, torch: set[str]) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "is_available"
            and isinstance(func.value, ast.Attribute) and func.value.attr == "cuda"
            and isinstance(func.value.value, ast.Name) and func.value.value.id in torch)


def _is_cuda_device(node: ast.AST, torch: set[str]) -> bool:
    """A CUDA device as the code writes one: a string, a formatted string, torch.device, if/else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(_CUDA.fullmatch(node.value))
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        return isinstance(first, ast.Constant) and bool(_CUDA_PREFIX.match(str(first.value)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = node.func.value
        return isinstance(base, ast.Constant) and bool(_CUDA_PREFIX.match(str(base.value)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = node.left
        return isinstance(left, ast.Constant) and bool(_CUDA_PREFIX.fullmatch(str(left.value)))
    if isinstance(node, ast.Call):
        return _is_device_ctor(node, torch) and _names_cuda(node, torch)
    if isinstance(node, ast.IfExp):
        return _is_cuda_device(node.body, torch) or _is_cuda_device(node.orelse, torch)
    return False


def _device_position(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Where the code expects a device: never a comparison, an autocast's device type, a list."""
    parent = parents.get(node)
    if isinstance(parent, ast.Call):
        return node in parent.args and isinstance(parent.func, ast.Attribute) and parent.func.attr == "to"
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        if parent.arg in _DEVICE_KEYWORDS:
            return True
        return parent.arg == "default" and isinstance(call, ast.Call) and _call_name(call) == "add_argument"
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.Return)):
        return parent.value is node
    if isinstance(parent, ast.arguments):
        return node in parent.defaults or node in parent.kw_defaults
    return False


def _call_name(call: ast.Call) -> str:
    return _last_name(call.func)


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # optimizers[i].step()
        return _last_name(node.value)
    return ""


def _steps_optimizer(value: ast.AST) -> bool:
    """`optimizer.step(...)` or a GradScaler's `scaler.step(optimizer)`, as a whole statement."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "step"):
        return False
    receiver = _last_name(value.func.value)
    if _OPTIMIZER.search(receiver):
        return True
    return ("scaler" in receiver.lower() and bool(value.args)
            and bool(_OPTIMIZER.search(_last_name(value.args[0]))))


def _after(stmt: ast.stmt, src: _Source, code: str, rule: str) -> Edit:
    """`code` as the next line at the statement's indentation, or `; code` on a shared line."""
    end_line = stmt.end_lineno or stmt.lineno
    if src.alone_on_line(stmt):
        at = src.line_end(end_line)
        return Edit(at, at, src.eol(end_line) + src.indent(stmt.lineno) + code, rule)
    at = src.span(stmt)[1]
    return Edit(at, at, f"; {code}", rule)


def _outermost(edits: list[Edit]) -> list[Edit]:
    """Drop an edit inside another's span (torch.device("cuda" if ... else "cpu") is one edit); an
    insertion at either end of a span is beside it, not inside."""
    def inside(e: Edit, o: Edit) -> bool:
        if o is e or o.start == o.end or (o.start, o.end) == (e.start, e.end):
            return False
        if e.start == e.end:
            return o.start < e.start < o.end
        return o.start <= e.start and e.end <= o.end

    return [e for e in edits if not any(inside(e, o) for o in edits)]


def _imports_torch_xla(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.Import) and any(a.name.split(".")[0] == "torch_xla" and not a.asname
                                                 for a in s.names) for s in tree.body)


def _import_edit(tree: ast.Module, src: _Source) -> Edit:
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) and any(a.name == "torch" for a in stmt.names) \
                and src.alone_on_line(stmt):
            return _after(stmt, src, IMPORT, "import torch_xla")
    header = None
    for stmt in tree.body:
        docstring = stmt is tree.body[0] and isinstance(stmt, ast.Expr) and \
            isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if not (docstring or isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            break
        header = stmt
    if header is not None and src.alone_on_line(header):
        return _after(header, src, IMPORT, "import torch_xla")
    first = tree.body[0]
    line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    at = src.starts[line - 1]
    return Edit(at, at, IMPORT + src.eol(line), "import torch_xla")
