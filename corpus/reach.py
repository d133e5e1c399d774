"""Which code of the training entry's import closure a run can reach: functions and classes by name.

A file the entry imports runs its module-level code, but a function or class in it runs only when
something that runs names it. `reached_texts` keeps, per file, the lines a run can reach and blanks
the rest, so hazards are counted where the run may execute them (scan.training_path_counts).

Reachability is by name, over-approximate and static (never runs project code):
- module-level code of every file on the path runs, except a `__main__` block outside the roots;
- a function, class or method is reached when its parent is reached and its name is used by
  reached code (a name, an attribute, an identifier-like string such as getattr's), by the
  training command or its configuration files; a class also when a reached class lists it as a
  base; a method also when it is a dunder, a hook a framework calls by name (HOOK_NAMES,
  HOOK_PATTERN) or of a class built on another library's (which may call any of its methods); a
  definition under a decorator that may register it is reached with its parent, or, when the
  decorator gives it a key (`@register_train('custom')`), once something reached, the command or
  its configuration uses that key.
A file that does not parse (Python 2, syntax errors) is kept whole.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# methods frameworks call by name (torch, Lightning, Hugging Face, gym, samplers, loggers)
HOOK_NAMES = frozenset({
    "forward", "backward", "setup_context", "jvp", "vjp", "step", "zero_grad", "get_lr",
    "reset_parameters", "extra_repr", "setup", "teardown", "prepare_data", "configure_optimizers",
    "configure_model", "configure_callbacks", "compute_loss", "prediction_step", "evaluate",
    "create_optimizer", "create_scheduler", "reset", "render", "close", "seed", "emit", "run",
    "collate_fn", "state_dict", "load_state_dict", "train", "eval"})
HOOK_PATTERN = re.compile(r"^(on_|training_|validation_|test_|predict_)|_step(_end)?$"
                          r"|_epoch_end$|_dataloader$")
# decorators that never register a definition elsewhere: the name must still be used
PLAIN_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "setter", "getter", "deleter", "wraps",
    "lru_cache", "cache", "cached_property", "no_grad", "enable_grad", "inference_mode",
    "abstractmethod", "dataclass", "contextmanager", "overload", "override", "jit", "script",
    "ignore", "unused", "compile", "custom_fwd", "custom_bwd", "once_differentiable",
    "total_ordering", "autocast", "njit", "vmap"})
# names in base-class expressions whose methods are called only through HOOK_NAMES and dunders
PLAIN_BASES = frozenset({
    "object", "Exception", "ValueError", "RuntimeError", "ABC", "Enum", "IntEnum", "NamedTuple",
    "dict", "list", "tuple", "str", "int", "float", "Generic", "Protocol", "TypedDict",
    "torch", "nn", "Module", "Sequential", "ModuleList", "ModuleDict", "utils", "data", "Dataset",
    "IterableDataset", "Sampler", "autograd", "Function", "optim", "Optimizer", "lr_scheduler",
    "_LRScheduler", "LRScheduler", "metaclass", "ABCMeta", "type"})
_WORD = re.compile(r"[A-Za-z_]\w*")
_PREFIX = re.compile(r"[A-Za-z_]\w*$")


@dataclass
class _Def:
    """A function, method or class definition: its lines and the names its own body uses."""

    file: str
    name: str
    first: int  # first line, decorators included
    last: int
    parent: _Def | None
    is_class: bool
    is_method: bool
    registers: bool  # under a decorator that may register it
    keys: set[str] = field(default_factory=set)  # the words of the strings it is registered under
    bases: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)  # names its body uses when it runs


@dataclass
class Reach:
    """Per file, its text with unreachable lines blanked; what was decided, for the scan record."""

    texts: dict[str, str]
    definitions: int = 0
    reached: int = 0
    unparsed: list[str] = field(default_factory=list)


def _decorator_name(node: ast.expr) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _names(node: ast.AST, into: set[str]) -> None:
    """Names, attributes and identifier-like strings used anywhere under node."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            into.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            into.add(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) < 200:
            into.update(_WORD.findall(sub.value))
        elif (isinstance(sub, ast.JoinedStr) and sub.values and isinstance(sub.values[0], ast.Constant)
              and isinstance(sub.values[0].value, str)
              and (m := _PREFIX.search(sub.values[0].value))):
            into.add(m[0] + "*")  # getattr(self, f"initialize_{name}"): a name by its start


class _Collector:
    """Walks one module: every definition with the names its own code uses."""

    def __init__(self, file: str, is_root: bool) -> None:
        self.file, self.is_root = file, is_root
        self.defs: list[_Def] = []
        self.module_uses: set[str] = set()
        self.aliases: dict[str, set[str]] = {}  # `import x as y`: y used -> x used
        self.dead_blocks: list[tuple[int, int]] = []  # __main__ blocks of imported files

    def body(self, stmts: list[ast.stmt], owner: _Def | None, in_class: _Def | None) -> None:
        uses = owner.uses if owner is not None else self.module_uses
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.definition(stmt, owner, in_class, uses)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.asname:
                        self.aliases.setdefault(alias.asname, set()).add(alias.name.split(".")[-1])
            elif (owner is None and not self.is_root and isinstance(stmt, ast.If)
                  and _is_main_guard(stmt.test)):
                self.dead_blocks.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
                self.body(stmt.orelse, owner, in_class)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring or a bare constant runs nothing
            elif isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                continue  # an export list names what may be imported, not what runs
            else:
                nested = [n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.stmt)]
                if nested and isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try,
                                                ast.AsyncFor, ast.AsyncWith)):
                    for child in ast.iter_child_nodes(stmt):
                        if not isinstance(child, ast.stmt):
                            _names(child, uses)
                    for block in _blocks(stmt):
                        self.body(block, owner, in_class)
                else:
                    _names(stmt, uses)

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                   owner: _Def | None, in_class: _Def | None, parent_uses: set[str]) -> None:
        decorators = [_decorator_name(d) for d in node.decorator_list]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        d = _Def(self.file, node.name, first, node.end_lineno or node.lineno,
                 in_class or owner, isinstance(node, ast.ClassDef), in_class is not None,
                 any(n not in PLAIN_DECORATORS for n in decorators))
        self.defs.append(d)
        for dec, name in zip(node.decorator_list, decorators):  # run where the definition runs
            if name in PLAIN_DECORATORS:
                _names(dec, parent_uses)
                continue
            for sub in ast.walk(dec):  # a registry's key is what chooses it, not a use of it
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    d.keys.update(_WORD.findall(sub.value))
                elif isinstance(sub, ast.Name):
                    parent_uses.add(sub.id)
                elif isinstance(sub, ast.Attribute):
                    parent_uses.add(sub.attr)
        if isinstance(node, ast.ClassDef):
            for base in node.bases + [k.value for k in node.keywords]:
                _names(base, d.bases)
            # a class body runs when the class statement runs: its code belongs to the parent
            self.body(node.body, owner, d)
            return
        for default in node.args.defaults + [x for x in node.args.kw_defaults if x is not None]:
            _names(default, parent_uses)
        self.body(node.body, d, None)


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if block:
            out.append(block)
    for handler in getattr(stmt, "handlers", []):
        out.append(handler.body)
    return out


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def reached_texts(texts: dict[str, str], roots: Iterable[str],
                  outside_words: Iterable[str] = ()) -> Reach:
    """`texts`: path -> source of the files on the training path; `roots`: the entry scripts;
    `outside_words`: words of the command and its configuration files (names they may choose)."""
    roots = set(roots)
    collectors: list[_Collector] = []
    out = Reach(texts=dict(texts))
    for path, text in texts.items():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            out.unparsed.append(path)
            continue
        c = _Collector(path, path in roots)
        c.body(tree.body, None, None)
        collectors.append(c)
    defs = [d for c in collectors for d in c.defs]
    used: set[str] = set(outside_words)
    for c in collectors:
        used |= c.module_uses
    aliases: dict[str, set[str]] = {}
    for c in collectors:
        for k, v in c.aliases.items():
            aliases.setdefault(k, set()).update(v)
    reached = _fixpoint(defs, used, aliases)
    out.definitions, out.reached = len(defs), len(reached)
    for c in collectors:
        dead = [(d.first, d.last) for d in c.defs if id(d) not in reached] + c.dead_blocks
        if dead:
            out.texts[c.file] = _blank(texts[c.file], dead)
    return out


def _fixpoint(defs: list[_Def], used: set[str], aliases: dict[str, set[str]]) -> set[int]:
    """ids of the definitions reached: a worklist over newly used names and newly reached
    parents, so each definition is looked at a bounded number of times."""
    by_name: dict[str, list[_Def]] = {}
    children: dict[int, list[_Def]] = {}
    for d in defs:
        by_name.setdefault(d.name, []).append(d)
        if d.parent is not None:
            children.setdefault(id(d.parent), []).append(d)
    class_names = {d.name for d in defs if d.is_class}
    reached: set[int] = set()
    bases: set[str] = set()  # names reached classes list as bases
    names = list(used)
    todo = [d for d in defs if d.parent is None]
    seen_names: set[str] = set()

    def use(words: set[str]) -> None:
        for w in words:
            if w not in seen_names:
                names.append(w)

    while names or todo:
        while names:
            w = names.pop()
            if w in seen_names:
                continue
            seen_names.add(w)
            used.add(w)
            use(aliases.get(w, set()))
            if w.endswith("*"):  # every definition whose name starts so
                starts = w[:-1]
                for name, named in by_name.items():
                    if name.startswith(starts):
                        used.add(name)
                        todo += named
            todo += by_name.get(w, [])
        while todo:
            d = todo.pop()
            if id(d) in reached or (d.parent is not None and id(d.parent) not in reached):
                continue
            hook = d.is_method and (d.name.startswith("__") or d.name in HOOK_NAMES
                                    or bool(HOOK_PATTERN.search(d.name))
                                    or _library_driven(d.parent, class_names))
            # registered under a key: reached when the key is used (a configuration names it);
            # registered by name alone, or with a key never seen: a registry may call it anyway
            registered = d.registers and (not d.keys or bool(d.keys & used))
            if d.name in used or registered or hook or (d.is_class and d.name in bases):
                reached.add(id(d))
                todo += children.get(id(d), [])
                if d.is_class:
                    new_bases = d.bases - bases
                    bases |= new_bases
                    todo += [b for n in new_bases for b in by_name.get(n, [])]
                use(d.uses | d.bases)
    return reached


def _library_driven(cls: _Def | None, class_names: set[str]) -> bool:
    """A class built on another library's class (a gym wrapper, a Trainer, a Lightning module):
    that library may call any of its methods by name, so all of them count as reached."""
    return cls is not None and cls.is_class and any(
        b not in class_names and b not in PLAIN_BASES for b in cls.bases)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    lines = text.split("\n")
    for first, last in spans:
        for i in range(first - 1, min(last, len(lines))):
            lines[i] = ""
    return "\n".join(lines)
