"""The task kit (tasks/task_kit.py, copied beside evaluate.py and prepare.py) and the recipe
operations that build on a task's gold (`r.gold`, `r.apply_gold(without=...)`)."""

from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpu2tpu.sandbox.process import isolated_python
from gpu2tpu.tasks import KIT_NAME, TASK_KIT
from gpu2tpu.tasks.recipe import RecipeError, apply_recipe


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / KIT_NAME).write_bytes(TASK_KIT.read_bytes())
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import task_kit  # type: ignore[import-not-found]

    return importlib.reload(task_kit)


def test_load_state_strips_wrappers_and_refuses_pickled_code(kit, tmp_path: Path):
    path = tmp_path / "ck.pt"
    torch.save({"module._orig_mod.w": torch.ones(2, dtype=torch.bfloat16), "n": torch.tensor(3)}, path)
    state = kit.load_state(path, as_float=True)
    assert set(state) == {"w", "n"} and state["w"].dtype == torch.float32 and state["n"].dtype == torch.int64
    torch.save({"model": {"a": torch.zeros(1)}}, path)
    assert set(kit.load_state(path, key="model")) == {"a"}
    with pytest.raises(kit.GoalUnavailable, match="no 'opt' entry"):
        kit.load_state(path, key="opt")

    class Evil:
        def __reduce__(self):
            return (print, ("pickled code ran",))

    torch.save({"w": Evil()}, path)
    with pytest.raises(Exception, match="Weights only load failed|Unsupported"):
        kit.load_state(path)


def test_evaluate_goal_writes_goal_json_as_the_harness_runs_it(tmp_path: Path):
    """Run the way the harness runs evaluate.py (isolated_python, the kit copied beside it): the
    value, or the reason there is none."""
    task = tmp_path / "task"
    (task / "project").mkdir(parents=True)
    (task / "project" / "modeldef.py").write_text("SCALE = 2.0\n")  # a practice task's project/
    (task / KIT_NAME).write_bytes(TASK_KIT.read_bytes())
    (task / "evaluate.py").write_text(
        "from task_kit import GoalUnavailable, evaluate_goal\n"
        "def measure(ckpt):\n"
        "    from modeldef import SCALE\n"
        "    state = ckpt.state()\n"
        "    if not state:\n"
        "        raise GoalUnavailable('empty checkpoint')\n"
        "    return SCALE * float(state['w'].sum())\n"
        "evaluate_goal('score', measure)\n")
    torch.save({"module.w": torch.ones(3)}, tmp_path / "ck.pt")
    out = tmp_path / "goal.json"
    argv = isolated_python(task / "evaluate.py", "--checkpoint", str(tmp_path / "ck.pt"), "--out", str(out))
    subprocess.run(argv, cwd=task, check=True)
    assert json.loads(out.read_text()) == {"schema_version": 1, "metric": "score", "value": 6.0}
    torch.save({}, tmp_path / "ck.pt")
    subprocess.run(argv, cwd=task, check=True)
    assert json.loads(out.read_text())["error"] == "empty checkpoint"


def test_prepare_main_refuses_a_missing_root(kit, tmp_path: Path):
    seen = []
    kit.prepare_main(seen.append, "o/n", [str(tmp_path)])
    assert seen == [tmp_path]
    with pytest.raises(SystemExit, match="usage: python prepare.py ROOT .*o/n"):
        kit.prepare_main(seen.append, "o/n", [str(tmp_path / "missing")])


def test_stand_in_writers_are_deterministic_and_learnable(kit, tmp_path: Path):
    a, labels = kit.class_images(200, seed=3)
    b, _ = kit.class_images(200, seed=3)
    assert a.dtype.name == "uint8" and a.shape == (200, 3, 32, 32) and (a == b).all()
    means = {c: a[[i for i, y in enumerate(labels) if y == c]].mean(axis=0) for c in set(labels)}
    nearest = [min(means, key=lambda c: ((a[i] - means[c]) ** 2).sum()) for i in range(200)]
    assert sum(n == y for n, y in zip(nearest, labels)) > 150  # classes are separable
    md5 = kit.write_pickles(tmp_path / "cifar", kit.standin_cifar10(2, 8, 4))
    blob = (tmp_path / "cifar" / "data_batch_2").read_bytes()
    assert md5["data_batch_2"] == hashlib.md5(blob).hexdigest()
    assert pickle.loads(blob)["data"].shape == (8, 3072)
    assert pickle.loads(blob)["labels"] == kit.class_images(8, seed=2)[1]  # part i draws seed i
    assert pickle.loads((tmp_path / "cifar" / "test_batch").read_bytes())["data"].shape == (4, 3072)
    text = kit.token_sentences(500, seed=0)
    assert sum(len(s.split()) for s in text) >= 500 and text == kit.token_sentences(500, seed=0)



def test_cifar10_files_are_what_torchvision_reads(kit, tmp_path: Path):
    from torchvision.datasets import CIFAR10

    images, labels = kit.class_images(30, seed=5)
    files = kit.cifar10_files(kit.parts(images, labels, 5), kit.class_images(7, seed=0))
    assert sorted(files) == ["batches.meta", *(f"data_batch_{i}" for i in range(1, 6)), "test_batch"]
    assert files["data_batch_2"]["labels"] == labels[6:12]
    assert files["batches.meta"]["num_cases_per_batch"] == 6
    # the layout is the real one: torchvision's reader takes it, checking the stand-in md5s as
    # the kit's launcher makes it
    md5 = kit.write_pickles(tmp_path / "cifar-10-batches-py", files)

    class StandIn(CIFAR10):
        train_list = [[f, md5[f]] for f, _ in CIFAR10.train_list]
        test_list = [[f, md5[f]] for f, _ in CIFAR10.test_list]
        meta = {**CIFAR10.meta, "md5": md5["batches.meta"]}

    train = StandIn(str(tmp_path), train=True, download=False)
    test = StandIn(str(tmp_path), train=False, download=False)
    assert len(train) == 30 and len(test) == 7 and train.targets == [int(c) for c in labels]
    assert (train.data[3] == images[3].transpose(1, 2, 0)).all()  # HWC, as torchvision holds it
    assert train.classes == kit.CIFAR10_CLASSES


def test_write_cora_is_deterministic_consistent_and_learnable(kit, tmp_path: Path):
    kit.write_cora(tmp_path / "a", papers=300, words=40, edges=600)
    kit.write_cora(tmp_path / "b", papers=300, words=40, edges=600)
    content = (tmp_path / "a" / "cora.content").read_text().splitlines()
    assert (tmp_path / "b" / "cora.content").read_text().splitlines() == content
    rows = [line.split("\t") for line in content]
    assert len(rows) == 300 and all(len(r) == 1 + 40 + 1 for r in rows)
    assert all(r[-1] in kit.CORA_CLASSES and "1" in r[1:-1] for r in rows)  # no empty paper
    label = {r[0]: r[-1] for r in rows}
    cites = [line.split("\t") for line in (tmp_path / "a" / "cora.cites").read_text().splitlines()]
    assert cites and all(a in label and b in label and a != b for a, b in cites)
    within = sum(label[a] == label[b] for a, b in cites) / len(cites)
    assert within > 0.7  # most citations stay within a class (a random graph: about 1/7)


def test_recalibrate_batchnorm_averages_the_batches_and_leaves_eval_mode(kit):
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 2, 1, bias=False), torch.nn.BatchNorm2d(2))
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(2).view(2, 2, 1, 1))
    model[1].running_mean.fill_(9.0)
    batches = [torch.full((4, 2, 3, 3), 1.0), torch.full((4, 2, 3, 3), 3.0)]
    kit.recalibrate_batchnorm(model, batches)
    assert torch.allclose(model[1].running_mean, torch.full((2,), 2.0))  # plain mean of 1 and 3
    assert not model.training and model[0].weight.grad is None


def test_block_cross_entropy_of_a_uniform_model_is_log_vocab(kit):
    class Uniform(torch.nn.Module):
        block_size = 5

        def forward(self, x):
            return torch.zeros(*x.shape, 11), None

    tokens = torch.randint(0, 11, (23,))
    assert abs(kit.block_cross_entropy(Uniform(), tokens) - float(torch.log(torch.tensor(11.0)))) < 1e-6


def _task_with_gold(tmp_path: Path) -> tuple[Path, Path]:
    mig = tmp_path / "task" / "migrations"
    (mig / "broken").mkdir(parents=True)
    (mig / "gold.py").write_text(
        "F = 'train.py'\n"
        "def to_xla(r):\n"
        "    r.replace(F, 'device = \"cuda\"', 'device = xm.xla_device()')\n"
        "def apply(r):\n"
        "    to_xla(r)\n"
        "    r.delete(F, 'print(loss.item())')\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text('device = "cuda"\nfor step in range(3):\n    print(loss.item())\n')
    return mig, tree


def test_a_broken_recipe_is_the_gold_except_one_edit(tmp_path: Path):
    mig, tree = _task_with_gold(tmp_path)
    (mig / "broken" / "item_kept.py").write_text(
        "def apply(r):\n    r.apply_gold(without=[('train.py', 'print(loss.item())')])\n")
    apply_recipe(mig / "broken" / "item_kept.py", tree)
    assert (tree / "train.py").read_text() == \
        'device = xm.xla_device()\nfor step in range(3):\n    print(loss.item())\n'


def test_gold_helpers_are_reachable_without_a_loader(tmp_path: Path):
    mig, tree = _task_with_gold(tmp_path)
    (mig / "broken" / "helper.py").write_text("def apply(r):\n    r.gold.to_xla(r)\n")
    assert apply_recipe(mig / "broken" / "helper.py", tree) == ["train.py"]


def test_leaving_out_an_edit_the_gold_never_makes_fails_loudly(tmp_path: Path):
    mig, tree = _task_with_gold(tmp_path)
    (mig / "broken" / "stale.py").write_text(
        "def apply(r):\n    r.apply_gold(without=[('train.py', 'no such line')])\n")
    with pytest.raises(RecipeError, match="the gold edits no such anchor: train.py: 'no such line'"):
        apply_recipe(mig / "broken" / "stale.py", tree)


def test_the_kit_imports_nothing_beyond_the_standard_library_at_import_time(tmp_path: Path):
    code = (f"import sys; sys.path.insert(0, {str(TASK_KIT.parent)!r}); import task_kit; "
            "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
