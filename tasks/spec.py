"""The one reader of a task's files: task.yaml (RunSpec, with its content hash) and the labels
of its broken migrations (Label)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.errors import UserError
from gpu2tpu.tasks.sources import Pin

PRECISION_POLICIES = ("fp32", "bf16_allowed")
VALIDATED_FILE = "validated.json"  # what the task's last full labelled suite proved (harness/validated.py)
FILL = "FILL"  # a value `gpu2tpu tasks new` leaves for the author to measure; a task with one never loads
# What a task can exercise (task.yaml `hazards`, listed in the README's table of tasks).
HAZARDS = {
    "dropout": "random masks the reference and the migration draw differently",
    "bf16": "a precision the task allows, with its own rounding",
    "amp": "autocast and a gradient scaler written for CUDA",
    "grad_clip": "gradient clipping, by norm or by value",
    "grad_accum": "gradient accumulation over micro-batches",
    "padding": "variable-length batches that recompile per shape",
    "host_sync": "per-step host reads (.item(), printing, logging)",
    "data_parallel": "several chips, DataParallel or DistributedDataParallel",
    "custom_kernel": "a CUDA-only kernel or extension with a PyTorch fallback",
    "inner_loop": "an optimisation loop inside the training step (attacks, unrolling)",
    "rl_env": "an environment stepped on the host between device steps",
    "sparse": "sparse tensors or scatter/gather on graphs",
    "checkpoint": "a checkpoint saved on the device and loaded elsewhere",
    "scheduler": "a learning-rate schedule stepped per batch or per epoch",
    "generative": "sampling from a generative model (noise, latent draws)",
    "ema": "an exponential moving average of the weights",
    "recurrent": "a recurrent state carried across batches (truncated BPTT)",
    "cuda_rng": "seeding or generators that name the CUDA device",
}


@dataclass(frozen=True)
class Goal:
    metric: str
    higher_is_better: bool
    tolerance: float


@dataclass(frozen=True)
class Tolerances:
    loss_step0_rtol: float = 0.01
    grad_norm_step0_rtol: float = 0.03
    # the curve band's floor, a fraction of the reference's loss magnitude: what a deterministic
    # model's curve may move between devices (every other band is 3 x the gold's measured drift;
    # in 169 graded reports of correct migrations of 29 tasks, none needed the floor to pass)
    curve_rtol: float = 0.05
    curve_spread_z: float = 3.0
    curve_drift_z: float = 3.0  # the curve band in units of the gold's same-seed drift
    init_input_tol: float = 0.01  # first batch's input fingerprint, in units of its own scale


@dataclass(frozen=True)
class Performance:
    warmup_steps: int = 3
    compile_allowance: int = 2
    host_sync_allowance: float = 0.1
    step_time_budget: float = 3.0
    time_limit_gold_factor: float = 20.0  # candidate time limit, in units of the gold's wall time


@dataclass(frozen=True)
class RunSpec:
    task_id: str
    task_dir: Path
    title: str
    description: str
    command: tuple[str, ...]
    seed: int
    seed_arg: str | None  # None: the harness offsets the project's own seeding calls instead
    reference_seeds: tuple[int, ...]
    steps: int
    target_chips: int
    precision_policy: str
    protected: tuple[str, ...]  # includes the stand-in data paths prepare.py writes
    checkpoint: str | None  # None: the probe saves the trained module's state_dict
    goal: Goal
    tolerances: Tolerances
    performance: Performance
    fallback_allowlist: tuple[str, ...]
    timeout_s: float
    kind: str = "practice"  # or "upstream": a corpus project materialised from `source`
    source: Pin | None = None
    workdir: str = ""  # where the command runs, relative to the project tree
    reference_args: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "cpu" / "cuda"
    prepare_outputs: tuple[str, ...] = ()
    harness_seed: bool = False  # the project never seeds: the probe seeds every RNG before it runs
    hazards: tuple[str, ...] = ()  # what a migration of this project can get wrong (HAZARDS)
    content_hash: str = field(default="")
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # task.yaml as read

    @property
    def project_dir(self) -> Path:
        return self.task_dir / "project"

    def command_for_seed(self, seed: int) -> list[str]:
        """The command for one seed: the project's seed flag, or nothing when the harness offsets
        the project's own seeding (seed_offset)."""
        return [*self.command, self.seed_arg, str(seed)] if self.seed_arg else list(self.command)

    def seed_offset(self, seed: int) -> int:
        return 0 if self.seed_arg else seed - self.seed

    @property
    def upstream(self) -> bool:
        return self.kind == "upstream"

    @property
    def seeds(self) -> list[int]:
        """The reference seeds: the task's own first, then the extra ones for the spread."""
        return [self.seed, *[s for s in self.reference_seeds if s != self.seed]]

    @property
    def gold_patch(self) -> Path:
        path = self.task_dir / "migrations" / "gold.patch"
        if not path.is_file():
            raise UserError(f"task {self.task_id} in {self.task_dir} is incomplete: "
                            "migrations/gold.patch is missing; add a correct torch_xla migration "
                            "there (docs/formats.md, 'Task directory') before evaluating or validating")
        return path

    def migrations(self, kind: str) -> list[Path]:
        """migrations/<kind>/*.patch in name order (`broken` or `alternatives`)."""
        return sorted((self.task_dir / "migrations" / kind).glob("*.patch"))

    def time_limit(self, gold_wall_s: float | None) -> float:
        """The candidate's time limit: `time_limit_gold_factor` times the gold's wall time, so a slow
        migration ends and is graded `slow` with its ratio; `timeout_s` caps it (hangs)."""
        if not gold_wall_s or gold_wall_s <= 0:
            return self.timeout_s
        factor = max(self.performance.time_limit_gold_factor, self.performance.step_time_budget)
        return min(self.timeout_s, max(60.0, factor * gold_wall_s))
    def migration_file(self, name: str) -> Path:
        """`gold`, `broken/NAME` or `alternatives/NAME`: a .patch file, or a .py recipe."""
        base = self.task_dir / "migrations" / name
        for path in (base.with_name(base.name + ".patch"), base.with_name(base.name + ".py")):
            if path.is_file():
                return path
        raise UserError(f"task {self.task_id} has no migration {name!r} "
                        f"({base}.patch or {base}.py); add it or choose another")

    def migration_names(self, group: str) -> list[str]:
        """Names under migrations/<group>/ (broken, alternatives), patches and recipes alike."""
        folder = self.task_dir / "migrations" / group
        return sorted({f"{group}/{p.stem}" for p in folder.glob("*") if p.suffix in (".patch", ".py")})


def task_tree_hash(task_dir: Path, leave_out: Callable[[str], bool] = lambda rel: False) -> str:
    """The one tree hasher of a task folder: SHA-256 over every file's relative name and bytes,
    bytecode included (a stray .pyc changes it instead of going unnoticed), less validated.json (a
    record about the task, written after its grading) and the relative names `leave_out` names."""
    digest = hashlib.sha256()
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(task_dir).as_posix()
        if rel == VALIDATED_FILE or leave_out(rel):
            continue
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def task_content_hash(task_dir: Path) -> str:
    """Every file of the task (task_tree_hash): what its verdicts and reports are keyed by."""
    return task_tree_hash(task_dir)


def read_task_yaml(task_dir: Path) -> dict[str, Any]:
    """task.yaml as a mapping; UserError naming the file when it is missing or malformed."""
    path = task_dir / "task.yaml"
    if not path.is_file():
        raise UserError(f"{task_dir} is not a task directory: task.yaml is missing")
    try:
        raw = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid YAML ({exc}); fix the file") from exc
    if not isinstance(raw, dict):
        raise UserError(f"{path}: must be a mapping of RunSpec fields (docs/formats.md)")
    return raw


_TYPES = (("task_id", (str,), "str"), ("title", (str,), "str"), ("command", (list,), "list"),
          ("seed", (int,), "int"), ("steps", (int,), "int"), ("target_chips", (int,), "int"),
          ("reference_seeds", (list,), "list of ints"), ("timeout_s", (int, float), "number"),
          ("protected", (list,), "list"), ("fallback_allowlist", (list,), "list"),
          ("goal", (dict,), "mapping"), ("tolerances", (dict,), "mapping"),
          ("performance", (dict,), "mapping"))


def load_spec(task_dir: Path) -> RunSpec:
    """The one reader of task.yaml: the harness, the agent, the corpus and the leaderboard use it."""
    task_dir = Path(task_dir).expanduser().resolve()
    path = task_dir / "task.yaml"
    raw = read_task_yaml(task_dir)
    todo = unfilled(raw)
    if todo:
        raise UserError(f"{path}: still to fill: {', '.join(todo)} (docs/upstream-tasks.md lists "
                        "each field with its unit)")
    for key, kinds, name in _TYPES:
        value = raw.get(key)
        wrong = not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
        if value is not None and wrong:
            raise UserError(f"{path}: {key}: expected {name}, found {value!r}")
    try:
        spec = RunSpec(
            task_id=str(raw["task_id"]), task_dir=task_dir, title=str(raw["title"]),
            description=str(raw["description"]), command=tuple(str(c) for c in raw["command"]),
            seed=int(raw["seed"]), seed_arg=str(raw["seed_arg"]) if raw.get("seed_arg") else None,
            reference_seeds=tuple(int(s) for s in raw.get("reference_seeds", [])),
            steps=int(raw["steps"]), target_chips=int(raw.get("target_chips", 1)),
            precision_policy=str(raw.get("precision_policy", "fp32")),
            protected=tuple([*raw.get("protected", []), *(raw.get("prepare") or {}).get("outputs", [])]),
            checkpoint=str(raw["checkpoint"]) if raw["checkpoint"] else None,
            goal=Goal(**raw["goal"]), tolerances=Tolerances(**raw.get("tolerances", {})),
            performance=Performance(**raw.get("performance", {})),
            fallback_allowlist=tuple(raw.get("fallback_allowlist", [])),
            timeout_s=float(raw.get("timeout_s", 600)), content_hash=task_content_hash(task_dir),
            hazards=_hazards(raw.get("hazards"), path), raw=raw, **_upstream_fields(raw, task_dir),
        )
    except KeyError as exc:
        raise UserError(f"{path}: required field {exc.args[0]!r} is missing") from exc
    except (TypeError, ValueError) as exc:
        raise UserError(f"{path}: malformed field: {exc}") from exc
    if spec.performance.warmup_steps < 1:
        raise UserError(f"{path}: performance.warmup_steps must be at least 1 (the first step compiles; "
                        "counts of compilations and host reads start after the warm-up)")
    if spec.precision_policy not in PRECISION_POLICIES:
        raise UserError(f"{path}: precision_policy must be one of {PRECISION_POLICIES}")
    return spec


def unfilled(raw: Any, path: str = "") -> list[str]:
    """The task.yaml fields still marked FILL, as dotted paths."""
    if raw == FILL:
        return [path]
    if isinstance(raw, dict):
        return [p for k, v in raw.items() for p in unfilled(v, f"{path}.{k}" if path else str(k))]
    if isinstance(raw, list):
        return [p for i, v in enumerate(raw) for p in unfilled(v, f"{path}[{i}]")]
    return []


def _hazards(value: Any, path: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    unknown = [v for v in value] if not isinstance(value, list) else [v for v in value if v not in HAZARDS]
    if unknown:
        raise UserError(f"{path}: hazards: unknown {unknown!r}; choose from {', '.join(HAZARDS)} "
                        "(docs/upstream-tasks.md, 'Hazards')")
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class Label:
    """What a broken migration must be graded: its category, the criteria that fail, and whether
    it fails silently (the program exits 0 and looks fine)."""

    category: str
    failing: tuple[str, ...]
    silent: bool


def read_label(migration: Path) -> Label:
    """The label beside a broken migration (`<name>.yaml` next to `<name>.patch|.py`)."""
    path = migration.with_suffix(".yaml")
    if not path.is_file():
        raise UserError(f"{migration} has no label: write {path.name} beside it with `category`, "
                        "`failing` and `silent` (docs/formats.md, 'Task directory')")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid YAML ({exc}); fix the file") from exc
    if not isinstance(raw, dict) or raw.get("category") is None:
        raise UserError(f"{path}: `category` is missing (a failure category)")
    failing = raw.get("failing") or ()
    if not isinstance(failing, (list, tuple)):
        raise UserError(f"{path}: `failing` must be a list of criteria, not {failing!r}")
    return Label(str(raw["category"]), tuple(str(f) for f in failing), bool(raw.get("silent")))


def _upstream_fields(raw: dict[str, Any], task_dir: Path) -> dict[str, Any]:
    kind = str(raw.get("kind", "practice"))
    if kind not in ("practice", "upstream"):
        raise UserError(f"{task_dir / 'task.yaml'}: kind must be practice or upstream, not {kind!r}")
    if kind == "practice":
        return {}
    src = raw.get("source") or {}
    missing = [k for k in ("repo", "commit", "tree") if not src.get(k)]
    if missing:
        raise UserError(f"{task_dir / 'task.yaml'}: source lacks {', '.join(missing)} "
                        "(an upstream task pins repo, commit and root tree id)")
    bad = [k for k in ("commit", "tree") if not re.fullmatch(r"[0-9a-f]{40}", str(src[k]))]
    if bad:
        raise UserError(f"{task_dir / 'task.yaml'}: source.{bad[0]} must be 40 lowercase hex digits "
                        "(`gpu2tpu tasks pin` prints both ids)")
    args = raw.get("reference_args") or {}
    return {"kind": kind, "source": Pin(id=str(raw["task_id"]), repo=str(src["repo"]),
                                        commit=str(src["commit"]), tree=str(src["tree"])),
            "workdir": str(raw.get("workdir") or ""),
            "reference_args": {k: tuple(str(a) for a in v) for k, v in args.items()},
            "prepare_outputs": tuple((raw.get("prepare") or {}).get("outputs", [])),
            "harness_seed": bool(raw.get("harness_seed", False))}


