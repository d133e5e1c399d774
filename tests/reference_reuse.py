"""Reference bundles a test session takes from the user cache (tests/conftest.py): reused by
content key, never trusted on sight."""

from __future__ import annotations

from pathlib import Path

from gpu2tpu.tasks.finder import find_task, list_tasks


def reuse_references(store_dir: Path) -> list[str]:
    """Copy into the session cache every sealed bundle of `store_dir` whose key is a current
    task's for a known target: the key covers the task's files, the code that builds references
    and the runtime versions, so a bundle is reused only where this code would build the same one,
    and the copy passes the checks a built bundle does (manifest, seal) or is not used."""
    from gpu2tpu.harness.ref_store import ReferenceStore
    from gpu2tpu.harness.references import reference_key
    from gpu2tpu.record.targets import TARGETS

    store = ReferenceStore(str(store_dir))
    reused = []
    for task_id in list_tasks():
        spec = find_task(task_id)
        for target in TARGETS.values():
            key = reference_key(spec, target)
            if store.has(f"{task_id}-{key}") and store.fetch(task_id, key) is not None:
                reused.append(f"{task_id}/{target.name}")
    return reused
