"""What a full labelled suite last proved, per task: `tasks/<id>/validated.json`.

`gpu2tpu validate` writes it for each task whose gold, alternatives and broken migrations were all
graded as labelled, keyed by what decided those verdicts: the task's content hash (which leaves
this file out), the grading code's hash and the runtime (torch, torch_xla). A task is *changed*
when any of the three differs; CI grades every gold, and the whole labelled suite of each changed
task (`validate --changed`); a release is checked with `validate --all`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from gpu2tpu.tasks.spec import VALIDATED_FILE, RunSpec

# The code that decides verdicts: the harness, the sandbox and the task machinery, less the
# command-line front ends that only choose what to grade, and the engines that only choose where
# it runs (the Ray engine runs the local evaluator unchanged on each node and moves its files; the
# only verdict it writes itself is `infra`, for an evaluation lost twice; tests/harness/test_ray.py
# checks its verdicts against the local engine's), and the validity report, which only reads them.
_NOT_GRADING = {"harness/cli.py", "harness/validate.py", "harness/validated.py", "tasks/cli.py",
                "tasks/options.py", "tasks/finder.py", "harness/engine.py", "harness/ray_engine.py",
                "harness/ray_tasks.py", "harness/ref_store.py", "harness/node_facts.py",
                "harness/ray_cluster.py", "harness/margins.py"}


def grading_files() -> list[Path]:
    import gpu2tpu.harness
    import gpu2tpu.sandbox
    import gpu2tpu.tasks

    out = []
    for package in (gpu2tpu.harness, gpu2tpu.sandbox, gpu2tpu.tasks):
        folder = Path(package.__file__ or "").resolve().parent
        for path in sorted(folder.glob("*.py")):
            if f"{_short(package.__name__)}/{path.name}" not in _NOT_GRADING:
                out.append(path)
    return out


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def grading_code_hash() -> str:
    digest = hashlib.sha256()
    for path in grading_files():
        digest.update(path.parent.name.encode() + b"/" + path.name.encode() + b"\0" +
                      path.read_bytes() + b"\0")
    return digest.hexdigest()


def runtime() -> dict[str, str | None]:
    from gpu2tpu.harness.execution import runtime_versions

    return {k: v for k, v in runtime_versions().items() if k in ("torch", "torch_xla")}


def key(spec: RunSpec, grading: str) -> dict[str, Any]:
    return {"content_hash": spec.content_hash, "grading_code": grading, "runtime": runtime()}


def read(spec: RunSpec) -> dict[str, Any] | None:
    path = spec.task_dir / VALIDATED_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def changed(spec: RunSpec, grading: str | None = None) -> str | None:
    """Why the task's labelled suite must be graded again, or None when its record still holds."""
    record = read(spec)
    if record is None:
        return "never validated"
    want = key(spec, grading or grading_code_hash())
    for field, what in (("content_hash", "the task's files"), ("grading_code", "the grading code"),
                        ("runtime", "torch or torch_xla")):
        if record.get(field) != want[field]:
            return f"{what} changed since it was validated"
    return None


def write(spec: RunSpec, grading: str, migrations: int, wall_s: float) -> Path:
    """Record a full labelled suite graded as labelled (the caller checked it)."""
    path = spec.task_dir / VALIDATED_FILE
    record = {"schema_version": 1, "task_id": spec.task_id, **key(spec, grading),
              "migrations": migrations, "wall_s": round(wall_s, 1),
              "validated_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path
