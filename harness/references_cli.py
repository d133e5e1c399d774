"""`gpu2tpu references push|pull`: move reference bundles between this node's cache and a store.

A bundle is a fact about the original project (its runs on the reference device, its gold on the
target), so it is built once, where the reference device is (a CUDA host), and used everywhere
else. What makes a pulled bundle trustworthy is the repository, not the store: each task's
validated.json pins the digest of the bundle its labelled suite was validated with, and `pull`
refuses a bundle whose digest differs, naming the task. An accepted bundle is sealed under this
node's key, so `evaluate` then uses it as if it had been built here (its reports say which device
the reference ran on)."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.harness import validated
from gpu2tpu.harness.ref_store import ReferenceStore
from gpu2tpu.harness.references import bundle_digest, bundle_dir, reference_key, usable
from gpu2tpu.record.execution import COMPLETE, MANIFEST, reference_device, verify_manifest
from gpu2tpu.record.report import ReportError, read_json
from gpu2tpu.record.sealed import seal
from gpu2tpu.record.targets import DEFAULT_TARGET, TARGET_NAMES, Target, get_target
from gpu2tpu.task_options import add_task_options, apply_task_options
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.spec import RunSpec

EXAMPLES = """examples:
  gpu2tpu references push --store gs://my-bucket/refs            # what this node built
  gpu2tpu references pull --store gs://my-bucket/refs --tasks tkipf__pygcn
  gpu2tpu references pull --store /mnt/shared/refs               # every task with a pin
"""


class BundleRefused(UserError):
    """A pulled bundle is not the one the repository pinned (or is malformed)."""


def pull(store: ReferenceStore, spec: RunSpec, target: Target) -> Path:
    """Fetch the bundle the task's validated.json pins from `store` into this node's cache;
    BundleRefused (naming the task) when the store's copy is not that bundle."""
    pin = (validated.read(spec) or {}).get("references")
    if not isinstance(pin, dict) or not pin.get("digest"):
        raise BundleRefused(f"{spec.task_id}: validated.json pins no reference bundle; validate the "
                            "task (`gpu2tpu validate --tasks ...`) or let `evaluate` build its references")
    device = str(pin.get("reference_device") or reference_device())
    key = reference_key(spec, target, device)
    dest = bundle_dir(spec.task_id, key)
    if usable(dest) and bundle_digest(dest) == pin["digest"]:
        return dest
    name = dest.name
    if not store.has(name):
        raise BundleRefused(f"{spec.task_id}: the store {store.url} has no bundle {name} (reference "
                            f"device {device}, this node's runtime and recording code); push it from "
                            "the node that validated the task, or build references locally")
    incoming = dest.with_name(name + ".pulling")
    try:
        if not store.download(name, incoming) or verify_manifest(incoming) is None:
            raise BundleRefused(f"{spec.task_id}: the store's bundle {name} does not match its own "
                                "manifest; refusing it")
        got = bundle_digest(incoming)
        if got != pin["digest"]:
            raise BundleRefused(f"{spec.task_id}: the store's bundle {name} has digest {got[:16]}, but "
                                f"validated.json pins {str(pin['digest'])[:16]}: refusing it (it is not "
                                "the bundle this task was validated with)")
        try:
            facts = read_json(incoming / COMPLETE)
        except ReportError as exc:
            raise BundleRefused(f"{spec.task_id}: the store's bundle {name} is incomplete ({exc})") from exc
        if facts.get("key") != key:
            raise BundleRefused(f"{spec.task_id}: the store's bundle {name} says it was built as "
                                f"{facts.get('key')!r}, not {key}; refusing it")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(incoming, dest)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    seal(dest, (dest / MANIFEST).read_bytes())  # checked against the repository's pin: trusted here
    return dest


def push(store: ReferenceStore, spec: RunSpec, target: Target) -> str:
    """Upload this node's own bundle of the task; says what happened."""
    bundle = bundle_dir(spec.task_id, reference_key(spec, target))
    if not usable(bundle):
        return (f"{spec.task_id}: no complete, sealed bundle under this code here (evaluate or "
                "validate the task first)")
    if store.publish(bundle):
        return f"{spec.task_id}: pushed {bundle.name} (digest {bundle_digest(bundle)[:16]})"
    return f"{spec.task_id}: {bundle.name} is already in the store"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("references", help="push this node's reference bundles to a store, or pull the "
                       "bundles the tasks' validated.json pin", description=__doc__, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("push", "pull"))
    p.add_argument("--store", required=True, metavar="URL",
                   help="a directory, file://, hf://, gs:// or s3:// URL (fsspec; gcsfs or s3fs for those)")
    p.add_argument("--tasks", nargs="*", help="task ids (default: every task found)")
    p.add_argument("--target", choices=TARGET_NAMES, default=DEFAULT_TARGET)
    add_task_options(p)
    p.set_defaults(func=cmd_references)


def cmd_references(args: argparse.Namespace) -> int:
    apply_task_options(args)
    store = ReferenceStore(args.store)
    target = get_target(args.target)
    task_ids = args.tasks or list_tasks()
    refused = 0
    for task_id in task_ids:
        spec = find_task(task_id)
        if args.action == "push":
            print(push(store, spec, target))
            continue
        try:
            path = pull(store, spec, target)
            print(f"{task_id}: pulled {path.name} (reference device "
                  f"{read_json(path / COMPLETE).get('parts', {}).get('reference_device')})")
        except BundleRefused as exc:
            print(f"refused {exc}")
            refused += 1
    if refused:
        print(f"{refused} of {len(task_ids)} bundle(s) refused")
    return 1 if refused else 0
