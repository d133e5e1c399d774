"""Run one command under the probe, inside the sandbox (harness/sandbox.py): its own writable
workspace, the grader's files hidden, the trace carried out through a pipe, time and output limits,
an allow-listed environment."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gpu2tpu.harness import sandbox
from gpu2tpu.harness.sandbox import Confinement, Limits

PROBE_FILE = Path(__file__).with_name("probe.py")
# the probe's parts, copied beside it into a run's workspace as gpu2tpu_probe*.py
PROBE_FILES = (PROBE_FILE, *(Path(__file__).with_name(f"probe_{n}.py") for n in ("counters", "hooks")))


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
    from gpu2tpu.corpus import TASKS_DIR

    # the sandbox shows an allow-list (harness/sandbox_view.py); these are covered where they lie
    # inside it: a non-editable install keeps the package, task folders included, in site-packages
    paths = [cache_root(), TASKS_DIR, Path(gpu2tpu.__file__).resolve().parent,
             Path(os.path.expanduser("~"))]
    for parent in Path(__file__).resolve().parents:
        if (parent / ".git").exists():
            paths.append(parent / ".git")
            break
    return [*paths, *ISOLATION.hide]


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
    """argv for a harness-owned script (evaluate.py, prepare.py): `python -I -B` minus -E, so the
    allow-listed PYTHONHASHSEED reaches it. Projects order classes and vocabularies by iterating
    sets of strings; under -I the goal's process hashed them with a random seed, not the training
    run's, and evaluated a model whose class indices it had permuted."""
    no_script_dir = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, "-s", "-B", *no_script_dir, str(script), *args]


def provenance() -> dict[str, str]:
    """What every output file carries: the harness version and the corpus revision."""
    from gpu2tpu import __version__
    from gpu2tpu.corpus import revision

    return {"harness_version": __version__, "corpus_revision": revision()}


def run_probed(command: list[str], workdir: Path, out_dir: Path, env: dict[str, str],
               timeout_s: float, hide: list[Path] | None = None, probe_dir: Path | None = None,
               save_model: Path | None = None, observer: sandbox.Observer | None = None) -> RunResult:
    """Run `command` inside `workdir` under the probe, sandboxed: only the workspace (`probe_dir`,
    default `workdir`'s parent) is writable; trace and logs land in `out_dir`, which the run cannot
    see. The probe is copied into the workspace, outside the project tree. With `save_model`, the
    probe saves the trained module's state_dict there when the script ends."""
    out_dir = Path(os.path.abspath(out_dir))  # the process runs in another working directory
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = (probe_dir or workdir.parent) / "gpu2tpu_probe.py"
    for part in PROBE_FILES:
        shutil.copyfile(part, probe.with_name("gpu2tpu_" + part.name))
    trace = out_dir / "trace.jsonl"
    trace.unlink(missing_ok=True)
    argv = [sys.executable, str(probe), "--stamp", json.dumps(provenance()),
            *(["--save-model", str(save_model)] if save_model else []), "--", *command]
    box = confinement([probe_dir or workdir.parent], [out_dir, *(hide or [])])
    return run_process(argv, workdir, out_dir, env, timeout_s, box=box, channel=trace,
                       observer=observer)


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
