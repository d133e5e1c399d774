"""Run one untrusted process in the sandbox: how this process isolates (set once by the CLI), the
standard confinement (only the named paths writable, the grader's paths invisible), the
allow-listed environment, and the run's result with its budgets."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gpu2tpu import sandbox
from gpu2tpu.sandbox import Confinement, Limits


@dataclass
class Isolation:
    """How this process runs untrusted code: set once by the CLI (`--unsafe-no-sandbox`) and by
    evaluate (the run directory's root joins the hidden paths)."""
    unsafe: bool = False
    hide: list[Path] = field(default_factory=list)


ISOLATION = Isolation()


def configure(unsafe: bool = False, hide: list[Path] | tuple[Path, ...] = ()) -> None:
    ISOLATION.unsafe = unsafe
    for p in hide:
        p = Path(os.path.abspath(p))
        if p not in ISOLATION.hide:
            ISOLATION.hide.append(p)


def sandbox_mode() -> str:
    """'bwrap' or 'none' (unsafe); raises SandboxUnavailable when neither is allowed."""
    return sandbox.require(ISOLATION.unsafe)


def grader_paths() -> list[Path]:
    """What untrusted code must never see: the reference cache, the task directories (gold and
    broken migrations, evaluate.py, other tasks), the install's git history, $HOME, run roots."""
    import gpu2tpu
    from gpu2tpu.cache import cache_root

    # the sandbox shows an allow-list (sandbox/view.py); these are covered where they lie
    # inside it: a non-editable install keeps the package, task folders included, in site-packages
    paths = [cache_root(), *_package_dirs("gpu2tpu.tasks"), Path(gpu2tpu.__file__).resolve().parent,
             Path(os.path.expanduser("~"))]
    for parent in Path(__file__).resolve().parents:
        if (parent / ".git").exists():
            paths.append(parent / ".git")
            break
    return [*paths, *ISOLATION.hide]


def _package_dirs(name: str) -> list[Path]:
    """Where a package lies, found without importing it (the sandbox sits below the tasks)."""
    found = importlib.util.find_spec(name)
    return [Path(p).resolve() for p in (found.submodule_search_locations or [])] if found else []


def interpreter_paths() -> list[Path]:
    """The interpreter and its packages, shown read-only (as named and as resolved)."""
    return sorted({Path(p) for base in (sys.prefix, sys.base_prefix)
                   for p in (os.path.abspath(base), os.path.realpath(base))})


def confinement(writable: list[Path], hide: list[Path]) -> Confinement:
    """The standard confinement: `writable` only, the grader's paths and `hide` invisible."""
    return Confinement(writable=writable, hide=[*grader_paths(), *hide],
                       reveal=interpreter_paths(), unsafe=ISOLATION.unsafe)


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    timed_out: bool
    wall_s: float
    sandbox: str = "bwrap"
    truncated: tuple[str, ...] = ()
    cpu_s: float | None = None  # user + system seconds of the run's whole process tree
    others_share: float | None = None  # share of the machine's CPU other processes used meanwhile
    over_budget: str | None = None  # "memory" or "disk": stopped for exceeding that budget
    peak_memory_bytes: int | None = None
    budget_held: dict[str, str] = field(default_factory=dict)
    limits: Limits | None = None


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed environment of every untrusted process plus `extra` (a target's or the
    reference device's variables): no secrets, no device settings from the caller."""
    return sandbox.sandbox_env(extra or {})


def isolated_python(script: Path, *args: str) -> list[str]:
    """argv for a harness-owned script (evaluate.py, prepare.py): `python -s -B`, not -I: -E would
    drop the allow-listed PYTHONHASHSEED (projects order classes and vocabularies by iterating sets
    of strings; under -I the goal's process hashed them with a random seed, not the training run's,
    and evaluated a model whose class indices it had permuted), and -P would hide the script's own
    folder, where the harness copies the task kit (task_kit.py) beside it. That folder is a private
    copy of the task's own files, never the graded tree."""
    return [sys.executable, "-s", "-B", str(script), *args]


def run_process(argv: list[str], cwd: Path, out_dir: Path, env: dict[str, str],
                timeout_s: float, log_name: str = "", box: Confinement | None = None,
                channel: Path | None = None, observer: sandbox.Observer | None = None) -> RunResult:
    """Run `argv` in the sandbox (default: only `cwd` writable, the grader's paths and `out_dir`
    hidden); stdout/stderr go to `out_dir`/[log_name.]stdout.log / stderr.log, truncated."""
    prefix = f"{log_name}." if log_name else ""
    out_dir = Path(os.path.abspath(out_dir))
    if box is None:
        box = confinement([cwd], [out_dir])
    limits = Limits(timeout_s=timeout_s)
    res = sandbox.run(argv, cwd, env, box, limits,
                      out_dir / f"{prefix}stdout.log", out_dir / f"{prefix}stderr.log", channel,
                      observer)
    return RunResult(exit_code=res.exit_code, timed_out=res.timed_out, wall_s=res.wall_s,
                     sandbox=res.sandbox, truncated=tuple(res.truncated), cpu_s=res.cpu_s,
                     others_share=res.others_share, over_budget=res.over_budget,
                     peak_memory_bytes=res.peak_memory_bytes, budget_held=res.budget_held,
                     limits=limits)


def budget_record(res: RunResult) -> dict:
    """What process.json says of the run's budgets: the limits, which held how, the peak memory,
    and what the run exceeded (its crash then names the budget)."""
    lim = res.limits
    return {"budget": {"memory_bytes": lim.memory_bytes if lim else None,
                       "tasks": lim.tasks if lim else None,
                       "disk_bytes": lim.disk_bytes if lim else None, "held": res.budget_held},
            "peak_memory_bytes": res.peak_memory_bytes, "over_budget": res.over_budget}
