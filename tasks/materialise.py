"""A task's starting tree and its shipped migrations, for practice and upstream tasks alike.

Practice tasks keep their original code in `project/` and migrations as patches. Upstream tasks
materialise a verified corpus project, add stand-in data with the task's own prepare.py, and
describe migrations as recipes; a recipe becomes a patch by applying it to a copy and diffing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.tasks import KIT_NAME, TASK_KIT
from gpu2tpu.tasks.recipe import apply_recipe
from gpu2tpu.tasks.sources import cache_dir, materialise_source
from gpu2tpu.tasks.spec import RunSpec

_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc")


_DIFF_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "checkpoints")

# git that diffs and applies bytes as they are: no CRLF conversion from the user's core.autocrlf, no
# eol attributes from a global attributes file (a CRLF project's patch must keep its \r)
GIT_VERBATIM = ("git", "-c", "core.autocrlf=false", "-c", "core.attributesFile=/dev/null")


class TreeDiffError(UserError):
    """Two trees could not be compared (git diff failed)."""


def read_patch(path: Path) -> str:
    """A patch file's text exactly as stored (read_text() would turn every \\r\\n into \\n)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text at byte {exc.start}; save the patch as UTF-8") from None


def write_patch(path: Path, text: str) -> None:
    """Write a patch's text byte for byte (no newline translation on any platform)."""
    path.write_bytes(text.encode("utf-8"))


def git_apply(patch_file: Path, tree: Path) -> subprocess.CompletedProcess[str]:
    """`git apply` of a patch file to `tree`, bytes as they are. git must not find a repository
    around the tree: inside one it reads the patch's paths from that repository's top and skips,
    with exit 0, every path outside the tree."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent)}
    return subprocess.run([*GIT_VERBATIM, "apply", "--whitespace=nowarn", str(patch_file)], cwd=tree,
                          env=env, capture_output=True, text=True)


class PrepareError(UserError):
    """The task's prepare.py failed: the task cannot be run here (an infra failure)."""


def original_tree(spec: RunSpec, sources: Path | None = None) -> Path:
    """The tree a migration starts from (read it, never edit it): project/ for a practice task; for
    an upstream task the verified source with the task's stand-in data, built once per task hash."""
    if not spec.upstream or spec.source is None:
        return spec.project_dir
    prepared = cache_dir(spec.source) / f"prepared-{prepared_key(spec)[:16]}"
    if (prepared / ".gpu2tpu-prepared").is_file():
        return prepared / "tree"
    source = materialise_source(spec.source, sources, needed_ok=spec.prepare_outputs)
    prepared.parent.mkdir(parents=True, exist_ok=True)
    with open(str(prepared) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (prepared / ".gpu2tpu-prepared").is_file():
            return prepared / "tree"
        building = prepared.with_name(prepared.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        shutil.copytree(source, building / "tree", symlinks=True)
        run_prepare(spec, building / "tree")
        (building / ".gpu2tpu-prepared").write_text(json.dumps({"task_hash": spec.content_hash}))
        shutil.rmtree(prepared, ignore_errors=True)
        os.replace(building, prepared)
    return prepared / "tree"


def prepared_key(spec: RunSpec) -> str:
    """The prepared tree's key: the task's content and the kit prepare.py imports."""
    return hashlib.sha256(spec.content_hash.encode() + TASK_KIT.read_bytes()).hexdigest()


def run_prepare(spec: RunSpec, root: Path) -> None:
    """`prepare.py ROOT` (`isolated_python`) from a copy of the script, sandboxed with only the tree (and a
    scratch directory for its logs) writable: the task's stand-in data, written into the tree."""
    from gpu2tpu.sandbox.process import clean_env, confinement, isolated_python, run_process

    script = spec.task_dir / "prepare.py"
    if not script.is_file():
        raise PrepareError(f"upstream task {spec.task_id} has no prepare.py in {spec.task_dir}")
    with tempfile.TemporaryDirectory(prefix=f"gpu2tpu-prepare-{spec.task_id}-") as tmp:
        scratch = Path(tmp)
        shutil.copyfile(script, scratch / "prepare.py")
        shutil.copyfile(TASK_KIT, scratch / KIT_NAME)  # the kit prepare.py imports
        res = run_process(isolated_python(scratch / "prepare.py", str(root)), root,
                          scratch, clean_env(), 600, log_name="prepare",
                          box=confinement([root, scratch], []))
        if res.exit_code != 0:
            tail = (scratch / "prepare.stderr.log").read_text(errors="replace").strip().splitlines()
            raise PrepareError(f"{script} failed (exit {res.exit_code}): "
                               f"{tail[-1] if tail else 'no output'}")
    missing = [p for p in spec.prepare_outputs if not (root / p).exists()]
    if missing:
        raise PrepareError(f"{script} did not write {', '.join(missing)} (declared in prepare.outputs)")


def migration_patch(spec: RunSpec, name: str) -> str:
    """A shipped migration as a unified diff against the original tree (what a prediction holds)."""
    path = spec.migration_file(name)
    if path.suffix == ".patch":
        return read_patch(path)
    with tempfile.TemporaryDirectory(prefix=f"gpu2tpu-recipe-{spec.task_id}-") as tmp:
        edited = materialise(spec, Path(tmp) / "tree", name)
        return diff_dirs(original_tree(spec), edited)


def materialise(spec: RunSpec, dest: Path, migration: str | None = None) -> Path:
    """Write the original tree (and, if named, a migration applied to it) to `dest`."""
    dest = Path(dest).expanduser()
    if dest.exists() and any(dest.iterdir()):
        raise UserError(f"{dest} exists and is not empty; name a new directory")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.rmdir()
    shutil.copytree(original_tree(spec), dest, ignore=_IGNORE, symlinks=True)
    if migration:
        path = spec.migration_file(migration)
        if path.suffix == ".py":
            apply_recipe(path, dest)
        else:
            proc = git_apply(path, dest)
            if proc.returncode != 0:
                raise UserError(f"{path} does not apply: {proc.stderr.strip()}")
    return dest


def diff_dirs(original: Path, migrated: Path) -> str:
    """Unified diff (git format, a/ b/ prefixes, paths relative to the project), every byte of each
    line kept: a CRLF file's lines keep their \\r, so the patch applies back byte for byte."""
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-diff-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        shutil.copytree(original, a, ignore=_DIFF_IGNORE, symlinks=True)
        shutil.copytree(migrated, b, ignore=_DIFF_IGNORE, symlinks=True)
        proc = subprocess.run([*GIT_VERBATIM, "diff", "--no-index", "--no-prefix", "--binary", "a", "b"],
                              cwd=tmp, capture_output=True)  # bytes: text=True would drop each \r
    if proc.returncode not in (0, 1):
        raise TreeDiffError(f"could not diff {migrated} against {original}: "
                            f"{proc.stderr.decode(errors='replace').strip()}")
    try:  # --no-prefix writes a/x and b/x literally, which is git's own a/ b/ convention
        return proc.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        header = proc.stdout[:exc.start].rfind(b"diff --git ")
        where = proc.stdout[header:].split(b"\n", 1)[0].decode(errors="replace") if header >= 0 else "?"
        raise TreeDiffError(f"the diff of {migrated} against {original} is not UTF-8 text ({where}): "
                            "save changed source files as UTF-8") from None
