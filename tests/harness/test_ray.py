"""The Ray engine (harness/ray_engine.py) and the reference store (harness/ref_store.py).

The slow tests start a real Ray cluster on this machine (a head and two worker nodes, each its own
`ray start` process, on a loopback address, with a custom `TPU` resource standing in for chips),
grade on it, and compare with what the local engine graded in the same session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness import node_facts
from gpu2tpu.harness.ref_store import COMPLETE, ReferenceStore, local_bundle
from gpu2tpu.record.execution import MANIFEST, write_manifest
from gpu2tpu.record.sealed import KEY_ENV, seal

GPU2TPU = [sys.executable, "-m", "gpu2tpu"]
TPU_STAND_IN = '{"TPU": 1}'  # each evaluation takes one stand-in chip; each worker node has one


# --- the reference store -------------------------------------------------------------------------

def _bundle(task: str, key: str, complete: bool = True) -> Path:
    root = local_bundle(task, key)
    (root / "seed-0").mkdir(parents=True)
    (root / "seed-0" / "trace.jsonl").write_text('{"step": 0, "loss": 2.3}\n')
    (root / "gold").mkdir()
    (root / "gold" / "goal.json").write_text('{"value": 0.5}')
    if complete:
        (root / COMPLETE).write_text(json.dumps({"key": key}))
    write_manifest(root)
    seal(root, (root / MANIFEST).read_bytes())
    return root


@pytest.fixture
def node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Switch this process to another node's cache (all nodes share the cluster's seal key)."""
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "cluster-seal.key"))

    def use(name: str) -> Path:
        monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / name))
        return tmp_path / name
    use("node-a")
    return use


@pytest.mark.parametrize("as_url", [False, True])
def test_a_bundle_built_on_one_node_is_fetched_sealed_on_another(tmp_path: Path, node, as_url: bool) -> None:
    store = ReferenceStore(("file://" if as_url else "") + str(tmp_path / "store"))
    built = _bundle("t", "k1")
    assert store.publish(built) and not store.publish(built)  # stored once
    node("node-b")
    assert not local_bundle("t", "k1").exists()
    fetched = store.fetch("t", "k1")
    assert fetched == local_bundle("t", "k1")
    assert (fetched / "gold" / "goal.json").read_text() == '{"value": 0.5}'
    assert store.fetch("t", "k2") is None  # not in the store: the node builds it itself


def test_a_stored_bundle_that_fails_the_checks_is_not_used(tmp_path: Path, node,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    store = ReferenceStore(str(tmp_path / "store"))
    store.publish(_bundle("t", "k1"))
    stored_goal = tmp_path / "store" / "t-k1" / "gold" / "goal.json"
    stored_goal.write_text('{"value": 0.99}')  # changed in the store after it was published
    node("node-b")
    assert store.fetch("t", "k1") is None
    stored_goal.write_text('{"value": 0.5}')
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "another-clusters.key"))  # a node outside the cluster
    node("node-c")
    assert store.fetch("t", "k1") is None


def test_a_failed_reference_build_is_never_shared(tmp_path: Path, node) -> None:
    store = ReferenceStore(str(tmp_path / "store"))
    assert not store.publish(_bundle("t", "k1", complete=False))
    assert not store.has("t-k1")


def test_a_store_url_without_its_filesystem_says_what_to_install() -> None:
    from gpu2tpu.errors import UserError

    with pytest.raises(UserError, match="install the fsspec filesystem"):
        ReferenceStore("nosuchscheme://bucket/refs")


# --- node facts, resources and flags -------------------------------------------------------------

def test_tpu_generations_from_slice_types(monkeypatch: pytest.MonkeyPatch) -> None:
    assert node_facts.tpu_generation("v6e-8") == "tpu-v6e"
    assert node_facts.tpu_generation("v5litepod-16") == "tpu-v5e"
    assert node_facts.tpu_generation("v5p-128") == "tpu-v5p"
    assert node_facts.tpu_generation("h100") is None and node_facts.tpu_generation(None) is None
    monkeypatch.setenv(node_facts.TPU_TYPE_ENV, "v6e-4")
    facts = node_facts.detect(probe_metadata=False)
    assert facts["accelerator"] == "tpu-v6e" and facts["cpus"] and facts["hostname"]


def test_each_target_asks_ray_for_its_hardware() -> None:
    import dataclasses

    from gpu2tpu.harness.engine import RayOptions
    from gpu2tpu.harness.ray_engine import candidate_resources, reference_resources, task_options
    from gpu2tpu.record.targets import get_target
    from gpu2tpu.tasks.finder import find_task

    spec = dataclasses.replace(find_task("ddp_mlp"), target_chips=4)
    assert candidate_resources(spec, get_target("tpu"), RayOptions()) == {"CPU": 1.0, "TPU": 4.0}
    assert candidate_resources(spec, get_target("xla-cpu"), RayOptions()) == {"CPU": 1.0}
    assert candidate_resources(spec, get_target("tpu"), RayOptions(resources={"TPU-v6e-8-head": 1})) \
        == {"TPU-v6e-8-head": 1}
    assert reference_resources(RayOptions()) == {"CPU": 1.0}
    assert reference_resources(RayOptions(reference_resources={"GPU": 1})) == {"GPU": 1}
    opts = task_options({"TPU": 4})
    assert opts["num_cpus"] == 1 and opts["resources"] == {"TPU": 4.0} and opts["max_retries"] == 1


def test_ray_flags_without_the_ray_engine_are_refused(tmp_path: Path, capsys) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    assert main(["evaluate", "--predictions", str(preds), "--run-id", "r",
                 "--address", "10.0.0.5:6379"]) == 2
    assert "--address is for the Ray engine: add --engine ray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["evaluate", "--predictions", str(preds), "--run-id", "r", "--engine", "ray",
              "--ray-resources", "TPU=4"])
    assert "not JSON" in capsys.readouterr().err


def test_an_evaluation_lost_twice_is_infra_and_written_once(tmp_path: Path) -> None:
    """Ray gives up on a task after its one retry: the evaluation is recorded `infra`, once."""
    from gpu2tpu.harness import ray_engine
    from gpu2tpu.harness.engine import RayOptions
    from gpu2tpu.harness.predictions import read_predictions
    from gpu2tpu.record.report import RunLayout
    from gpu2tpu.record.targets import get_target
    from gpu2tpu.tasks.finder import find_task

    class NodeDied(Exception):
        pass

    class LostCluster:  # the part of Ray's API the engine uses, with every node lost
        submitted: list[dict[str, Any]] = []

        def remote(self, fn: Any) -> LostCluster:
            return self

        def options(self, **kw: Any) -> LostCluster:
            return self

        def wait(self, refs: list[int], num_returns: int) -> tuple[list[int], list[int]]:
            return refs[:1], refs[1:]

        def get(self, ref: int) -> Any:
            raise NodeDied(f"task {ref}: the node running it died (retried once)")

    class Submit(LostCluster):
        def remote(self, job: Any) -> Any:  # type: ignore[override]
            self.submitted.append(job)
            return len(self.submitted)

    cluster = LostCluster()
    cluster.options = lambda **kw: Submit()  # type: ignore[method-assign]
    spec = find_task("cifar_amp")
    preds_file = tmp_path / "p.jsonl"
    preds_file.write_text("".join(json.dumps({"schema_version": 1, "task_id": "cifar_amp", "agent": a,
                                              "patch": "x"}) + "\n" for a in ("a", "b")))
    preds, _ = read_predictions(preds_file)
    layout = RunLayout(tmp_path / "run")
    reports = ray_engine._evaluate(cluster, preds, {"cifar_amp": spec}, {"cifar_amp": "key"},
                                   get_target("xla-cpu"), None, False, RayOptions(), layout)
    assert sorted(r.agent for r in reports) == ["a", "b"] and len(cluster.submitted) == 2
    for r in reports:
        assert r.verdict["category"] == "infra" and "the node running it died" in json.dumps(r.verdict)
    assert sorted(p.parent.parent.name for p in layout.root.rglob("report.json")) == ["a", "b"]


# --- a real cluster ------------------------------------------------------------------------------

def _labelled(run: Path, keep) -> dict[tuple[str, str], tuple[bool, str | None]]:
    summary = json.loads((run / "summary.json").read_text())
    out = {}
    for rel in summary["evaluations"]:
        r = json.loads((run / rel).read_text())
        if keep(r["task_id"], r["agent"]):
            out[(r["task_id"], r["agent"])] = (r["verdict"]["migrated"], r["verdict"]["category"])
    return out


def _predictions(run: Path, keep) -> list[dict[str, Any]]:
    """The prediction lines a run graded (patches as evaluated), for the ones `keep` picks."""
    lines = []
    summary = json.loads((run / "summary.json").read_text())
    for rel in summary["evaluations"]:
        r = json.loads((run / rel).read_text())
        if keep(r["task_id"], r["agent"]):
            lines.append({"schema_version": 1, "task_id": r["task_id"], "agent": r["agent"],
                          "patch": (run / rel).with_name("patch.diff").read_bytes().decode(),  # CRLF kept
                          "claimed_success": True})
    return lines


DEMO = {"gold", "broken-stays_on_cpu", "broken-item_every_step", "broken-clip_changed"}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.slow
def test_a_ray_cluster_grades_the_demo_and_two_upstream_tasks_as_the_local_engine(
        practice_run: Path, upstream_run: Path, tmp_path: Path) -> None:
    from gpu2tpu.harness.ray_cluster import LoopbackCluster

    def demo(task: str, agent: str) -> bool:
        return task == "cifar_amp" and agent in DEMO

    from gpu2tpu.harness import validated
    from gpu2tpu.tasks.finder import find_task
    from gpu2tpu.tasks.materialise import materialise

    # two of the upstream golds CI graded (harness/ci_selection.py), the cheapest by their records
    golds = sorted({t for t, _ in _labelled(upstream_run, lambda t, a: a == "gold")},
                   key=lambda t: validated.cost_per_migration(find_task(t)))
    assert len(golds) >= 2, golds
    two = set(golds[:2])

    def upstream(task: str, agent: str) -> bool:
        return task in two and agent == "gold"

    local = {**_labelled(practice_run, demo), **_labelled(upstream_run, upstream)}
    assert len(local) == 6
    lines = _predictions(practice_run, demo) + _predictions(upstream_run, upstream)
    for line in lines:  # the demo's gold as a migrated directory: its tree travels to the node
        if line["task_id"] == "cifar_amp" and line["agent"] == "gold":
            materialise(find_task("cifar_amp"), tmp_path / "gold tree", migration="gold")
            line["migrated_dir"] = "gold tree"
            del line["patch"]
    _write(tmp_path / "preds.jsonl", lines)
    with LoopbackCluster([{"CPU": 1, "TPU": 1}] * 2) as cluster:
        command = [*GPU2TPU, "evaluate", "--predictions", "preds.jsonl", "--run-id", "on-ray",
                   "--engine", "ray", "--address", cluster.address, "--ray-resources", TPU_STAND_IN]
        started = time.monotonic()
        first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1500)
        assert first.returncode == 0, first.stderr[-3000:]
        graded_s = time.monotonic() - started
        started = time.monotonic()  # again: every evaluation is finished, so each is reused
        again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        reused_s = time.monotonic() - started
    run = tmp_path / "runs" / "on-ray"
    assert _labelled(run, lambda t, a: True) == local
    hosts = set()
    for report in run.rglob("report.json"):
        if "references" not in report.parts:
            facts = node_facts.read(report.parent)
            assert facts and facts["engine"] == "ray" and facts["accelerator"] == "cpu"
            hosts.add(facts["hostname"])
    assert hosts
    assert subprocess.run([*GPU2TPU, "report", str(run)], capture_output=True).returncode == 0
    assert reused_s < graded_s / 2, (reused_s, graded_s)
    print(f"\nRay: 6 evaluations graded in {graded_s:.0f} s, reused in {reused_s:.0f} s")


def _probed_processes() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"gpu2tpu_probe.py" in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _node_running_a_candidate(cluster: Any) -> tuple[int, set[int]] | None:
    """The index of a worker node with a graded process running under it, and that node's graded
    processes (found by parent links: the sandbox starts its own session, its parent is the
    node's Ray worker). Graded processes of other work on this machine are not the cluster's."""
    sessions = {proc.pid: i for i, proc in enumerate(cluster.workers) if proc is not None}
    found: dict[int, set[int]] = {}
    for probe in _probed_processes():
        pid = probe
        try:
            while pid > 1:
                if os.getsid(pid) in sessions:
                    found.setdefault(sessions[os.getsid(pid)], set()).add(probe)
                    break
                stat = Path(f"/proc/{pid}/stat").read_text()
                pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
    return next(iter(found.items()), None)


@pytest.mark.slow
def test_a_worker_node_lost_mid_run_still_grades_every_evaluation_once(
        practice_run: Path, tmp_path: Path) -> None:
    from gpu2tpu.harness.ray_cluster import LoopbackCluster

    def two(task: str, agent: str) -> bool:  # the two cheapest practice golds
        return task in {"ddp_mlp", "varlen_cls"} and agent == "gold"

    local = _labelled(practice_run, two)
    _write(tmp_path / "preds.jsonl", _predictions(practice_run, two))
    with LoopbackCluster([{"CPU": 1, "TPU": 1}] * 2) as cluster:
        log = (tmp_path / "driver.log").open("w")
        driver = subprocess.Popen([*GPU2TPU, "evaluate", "--predictions", "preds.jsonl", "--run-id", "lost",
                                   "--engine", "ray", "--address", cluster.address,
                                   "--ray-resources", TPU_STAND_IN],
                                  cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
        deadline, victim = time.monotonic() + 300, None
        while victim is None and driver.poll() is None and time.monotonic() < deadline:
            victim = _node_running_a_candidate(cluster)
            time.sleep(0.5)
        assert victim is not None, (tmp_path / "driver.log").read_text()[-3000:]
        node, graded = victim
        cluster.kill_worker(node)  # mid-evaluation, as a lost machine
        assert driver.wait(timeout=900) == 0, (tmp_path / "driver.log").read_text()[-3000:]
        log.close()
        time.sleep(1)
        assert not graded & set(_probed_processes())  # the lost node's sandboxes died with it
    run = tmp_path / "runs" / "lost"
    summary = json.loads((run / "summary.json").read_text())
    assert len(summary["evaluations"]) == len(set(summary["evaluations"])) == 2
    assert _labelled(run, lambda t, a: True) == local  # the lost one was graded again, elsewhere
    reports = [p for p in run.rglob("report.json") if "references" not in p.parts]
    assert len(reports) == 2 and not list(run.rglob("*.incoming"))
