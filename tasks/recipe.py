"""Recipes: our own short code that edits a verified upstream tree (a migration, gold or broken).

A recipe file defines `apply(r)`; `r` is a Recipe bound to the tree. Every edit is anchored on one
existing line that must occur exactly once (compared after strip()), or, with replace_each, exactly
the stated number of times, so a recipe applied to another tree fails loudly instead of editing the
wrong place. No upstream line is stored in this repository
beyond the anchors a recipe names.

Files are edited as bytes split at "\n" only: each line keeps its own ending (CRLF stays CRLF,
a mixed file stays mixed), new lines take the anchor line's ending, untouched bytes stay as they were.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from gpu2tpu.errors import UserError


class RecipeError(UserError):
    """A recipe cannot be applied (message names the recipe step, the file and the anchor)."""


class Recipe:
    def __init__(self, root: Path, migrations: Path | None = None) -> None:
        self.root = Path(root)
        self.touched: list[str] = []
        self.migrations = migrations  # the task's migrations/ folder: where gold.py is
        self._skip: dict[tuple[str, str], int] = {}  # (file, anchor) -> times skipped

    @property
    def gold(self) -> Any:
        """The task's gold recipe as a module, so a broken or alternative recipe can call its
        functions (`r.gold.move_to_xla(r)`)."""
        if self.migrations is None or not (self.migrations / "gold.py").is_file():
            raise RecipeError("this recipe has no gold.py beside it to build on")
        return _load(self.migrations / "gold.py", "gold")

    def apply_gold(self, without: Iterable[tuple[str, str]] = ()) -> None:
        """The gold migration, except the edits anchored on each (file, anchor) of `without`: the
        usual broken migration is "the gold, but this one edit left out". Each skipped anchor must
        be one the gold edits, so a changed gold fails here instead of silently differing."""
        self._skip = {(rel, anchor.strip()): 0 for rel, anchor in without}
        try:
            self.gold.apply(self)
        finally:
            unused = [f"{rel}: {anchor!r}" for (rel, anchor), n in self._skip.items() if n == 0]
            self._skip = {}
        if unused:
            raise RecipeError(f"apply_gold(without=...): the gold edits no such anchor: {'; '.join(unused)}")

    def _skipped(self, rel: str, anchor: str) -> bool:
        key = (rel, anchor.strip())
        if key in self._skip:
            self._skip[key] += 1
            return True
        return False

    def _path(self, rel: str) -> Path:
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or not rel:
            raise RecipeError(f"recipe path {rel!r} must be relative and inside the tree")
        return self.root / rel

    def _lines(self, rel: str) -> list[str]:
        path = self._path(rel)
        if not path.is_file():
            raise RecipeError(f"{rel}: no such file in the tree")
        text = path.read_bytes().decode("utf-8", "surrogateescape")  # any bytes round-trip
        parts = text.split("\n")  # not splitlines(): it also splits at \r, \f, \x1c, ...
        return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])

    def _find(self, rel: str, lines: list[str], anchor: str) -> int:
        want = anchor.strip()
        hits = [i for i, line in enumerate(lines) if line.strip() == want]
        if len(hits) != 1:
            raise RecipeError(f"{rel}: anchor {want!r} found {len(hits)} times (expected exactly once)")
        return hits[0]

    def _save(self, rel: str, lines: list[str]) -> None:
        self._path(rel).write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
        if rel not in self.touched:
            self.touched.append(rel)

    @staticmethod
    def _indented(lines: Iterable[str], indent: str, newline: str) -> list[str]:
        return [(indent + line if line.strip() else line.rstrip(" ")) + newline for line in lines]

    @staticmethod
    def _shape(lines: list[str], i: int) -> tuple[str, str]:
        """(indentation, line ending) of line i; a last line without an ending gives the ending of
        the nearest line above that has one (else "\n")."""
        line = lines[i]
        ending = _ending(line) or next((e for e in map(_ending, reversed(lines[:i])) if e), "\n")
        body = line[: len(line) - len(_ending(line))]
        return body[: len(body) - len(body.lstrip())], ending

    @classmethod
    def _terminated(cls, lines: list[str], i: int) -> None:
        """Give line i an ending if it is the last line and has none, so lines can follow it."""
        if not _ending(lines[i]):
            lines[i] += cls._shape(lines, i)[1]

    def replace(self, rel: str, anchor: str, new: str | list[str]) -> None:
        """Replace the anchor line by `new` (one line or several), keeping its indentation."""
        if self._skipped(rel, anchor):
            return
        lines = self._lines(rel)
        i = self._find(rel, lines, anchor)
        indent, newline = self._shape(lines, i)
        lines[i:i + 1] = self._indented([new] if isinstance(new, str) else new, indent, newline)
        self._save(rel, lines)

    def replace_each(self, rel: str, anchor: str, new: str | list[str], count: int,
                     which: Iterable[int] | None = None) -> None:
        """For a line the file repeats verbatim: replace its occurrences (all, or the 1-based ones
        in `which`), each keeping its indentation; fails unless it occurs exactly `count` times."""
        if self._skipped(rel, anchor):
            return
        lines = self._lines(rel)
        want = anchor.strip()
        hits = [i for i, line in enumerate(lines) if line.strip() == want]
        if len(hits) != count:
            raise RecipeError(f"{rel}: anchor {want!r} found {len(hits)} times (expected exactly {count})")
        picked = sorted(set(which) if which is not None else range(1, count + 1), reverse=True)
        if not picked or picked[0] > count or picked[-1] < 1:
            raise RecipeError(f"{rel}: occurrences {sorted(picked)} of {want!r} must lie in 1..{count}")
        for k in picked:  # bottom up: the earlier indices stay valid
            i = hits[k - 1]
            indent, newline = self._shape(lines, i)
            lines[i:i + 1] = self._indented([new] if isinstance(new, str) else new, indent, newline)
        self._save(rel, lines)

    def insert_after(self, rel: str, anchor: str, new: list[str]) -> None:
        """Insert lines after the anchor, at its indentation (lines may add relative indentation)."""
        if self._skipped(rel, anchor):
            return
        lines = self._lines(rel)
        i = self._find(rel, lines, anchor)
        indent, newline = self._shape(lines, i)
        self._terminated(lines, i)
        lines[i + 1:i + 1] = self._indented(new, indent, newline)
        self._save(rel, lines)

    def insert_before(self, rel: str, anchor: str, new: list[str]) -> None:
        if self._skipped(rel, anchor):
            return
        lines = self._lines(rel)
        i = self._find(rel, lines, anchor)
        indent, newline = self._shape(lines, i)
        lines[i:i] = self._indented(new, indent, newline)
        self._save(rel, lines)

    def delete(self, rel: str, anchor: str) -> None:
        if self._skipped(rel, anchor):
            return
        lines = self._lines(rel)
        del lines[self._find(rel, lines, anchor)]
        self._save(rel, lines)

    def write(self, rel: str, text: str) -> None:
        """A new file of ours; refuses to overwrite an upstream file."""
        path = self._path(rel)
        if path.exists():
            raise RecipeError(f"{rel}: already exists; edit it with replace/insert instead")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())  # no newline translation on any platform
        self.touched.append(rel)


def _ending(line: str) -> str:
    """A line's own ending: "\r\n", "\n", or "" (the file's last line without one)."""
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""


def _load(recipe_file: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"gpu2tpu_recipe_{name}", recipe_file)
    if spec is None or spec.loader is None:
        raise RecipeError(f"{recipe_file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in
    try:  # the task folder: its content hash (and validated.json) must not change by a load
        spec.loader.exec_module(module)
    except Exception as exc:
        raise RecipeError(f"{recipe_file}: cannot be loaded ({type(exc).__name__}: {exc})") from exc
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def apply_recipe(recipe_file: Path, root: Path) -> list[str]:
    """Run `recipe_file`'s apply(r) on the tree at `root`; returns the paths it touched."""
    module = _load(recipe_file, recipe_file.stem)
    if not callable(getattr(module, "apply", None)):
        raise RecipeError(f"{recipe_file}: defines no apply(r)")
    migrations = next((p for p in recipe_file.resolve().parents if p.name == "migrations"), None)
    recipe = Recipe(root, migrations)
    try:
        module.apply(recipe)
    except RecipeError as exc:
        raise RecipeError(f"{recipe_file.name}: {exc}") from exc
    except Exception as exc:  # a bug in the recipe itself: name it, not a bare traceback
        raise RecipeError(f"{recipe_file}: apply(r) failed ({type(exc).__name__}: {exc}); "
                          "fix the recipe") from exc
    return recipe.touched
