"""`gpu2tpu agent baseline {noop,naive,gold}` (issue 44): the naive port's rewrites on small sources,
patches that the harness applies, predictions its own checker accepts, a line for every task."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpu2tpu.agent.baselines import (
    KINDS,
    NOOP_COMMENT,
    BaselineError,
    agent_name,
    make_prediction,
    noop_file,
    write_baselines,
)
from gpu2tpu.agent.naive_port import NaivePortError, naive_port
from gpu2tpu.cli import main
from gpu2tpu.harness.inputs import select
from gpu2tpu.harness.predictions import read_predictions
from gpu2tpu.record.workspace import apply_patch, original_tree
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.sources import source_present


def port(src: str) -> str:
    return naive_port(textwrap.dedent(src)).text


def body(src: str) -> str:
    """The ported text without the import line (to compare the rewritten statements only)."""
    return "\n".join(line for line in port(src).split("\n") if line != "import torch_xla")


# -- the naive port, one rewrite at a time ------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    ("x = x.cuda()", "x = x.to(torch_xla.device())"),
    ("x = x.cuda(args.gpu, non_blocking=True)", "x = x.to(torch_xla.device())"),
    ("noise = torch.randn(3).cuda().detach()", "noise = torch.randn(3).to(torch_xla.device()).detach()"),
    ("model.cuda()", "model.to(torch_xla.device())"),
    ('d = torch.device("cuda")', "d = torch_xla.device()"),
    ("d = torch.device('cuda:0')", "d = torch_xla.device()"),
    ('d = torch.device("cuda", args.local_rank)', "d = torch_xla.device()"),
    ('d = torch.device(f"cuda:{rank}")', "d = torch_xla.device()"),
    ("d = torch.device('cuda:{}'.format(args.gpu))", "d = torch_xla.device()"),
    ('d = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "d = torch_xla.device()"),
    ('d = torch.device("cuda:0" if use_cuda else "cpu")', "d = torch_xla.device()"),
    ('device = "cuda" if torch.cuda.is_available() else "cpu"', "device = torch_xla.device()"),
    ('device = "cuda"', "device = torch_xla.device()"),
    ('self.device: str = "cuda:1"', "self.device: str = torch_xla.device()"),
    ('x = x.to("cuda")', "x = x.to(torch_xla.device())"),
    ('x = x.to("cuda:0", non_blocking=True)', "x = x.to(torch_xla.device(), non_blocking=True)"),
    ('x = x.to(device="cuda")', "x = x.to(device=torch_xla.device())"),
    ('t = torch.zeros(3, device="cuda")', "t = torch.zeros(3, device=torch_xla.device())"),
    ('s = torch.load(f, map_location="cuda:0")', "s = torch.load(f, map_location=torch_xla.device())"),
    ('p.add_argument("--device", default="cuda")', 'p.add_argument("--device", default=torch_xla.device())'),
    ('def load(path, device="cuda"):\n    pass', "def load(path, device=torch_xla.device()):\n    pass"),
    ('def pick():\n    return "cuda" if ok else "cpu"', "def pick():\n    return torch_xla.device()"),
    ("use_cuda = not args.no_cuda and torch.cuda.is_available()", "use_cuda = not args.no_cuda and True"),
    ("if torch.cuda.is_available():\n    m.cuda()", "if True:\n    m.to(torch_xla.device())"),
])
def test_each_device_rewrite(before: str, after: str) -> None:
    assert body("import torch\n" + before + "\n") == "import torch\n" + after + "\n"


@pytest.mark.parametrize("line", [
    'amp = device.type == "cuda"',
    'ctx = torch.autocast("cuda", dtype=torch.bfloat16)',
    'ctx = torch.amp.autocast(device_type="cuda")',
    'scaler = torch.amp.GradScaler("cuda")',
    'p.add_argument("--device", choices=["cuda", "cpu"])',
    'assert device in ["cpu", "cuda"]',
    'print("cuda")',
    "torch.cuda.manual_seed_all(0)",
    "torch.backends.cudnn.benchmark = True",
    'd = torch.device("cpu")',
    "d = torch.device(args.device)",
    "x = x.to(device)",
    "# model.cuda() stays a comment",
    's = "x.cuda()"',
    "use_cuda = args.cuda",
])
def test_what_stays(line: str) -> None:
    src = "import torch\n" + line + "\n"
    result = naive_port(src)
    assert result.text == src and not result.changed


def test_import_added_once_after_import_torch() -> None:
    out = port('''\
        """Doc."""
        import os
        import torch
        import torch.nn as nn

        a = x.cuda()
        b = y.cuda()
        optimizer.step()
        ''')
    assert out.count("import torch_xla\n") == 1
    assert out.startswith('"""Doc."""\nimport os\nimport torch\nimport torch_xla\nimport torch.nn as nn\n')


def test_existing_import_kept_and_not_repeated() -> None:
    out = port("import torch\nimport torch_xla.core.xla_model as xm\nimport torch_xla\nx = x.cuda()\n")
    assert out.count("import torch_xla\n") == 1


def test_import_placed_after_docstring_and_future_without_import_torch() -> None:
    out = port('''\
        #!/usr/bin/env python
        """Doc."""
        from __future__ import annotations
        from torch import nn

        m = nn.Linear(2, 2).cuda()
        ''')
    assert out.split("\n")[:4] == ["#!/usr/bin/env python", '"""Doc."""',
                                   "from __future__ import annotations", "import torch_xla"]
    ast.parse(out)


def test_import_before_first_statement_keeps_the_shebang() -> None:
    out = port("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\n@decorate\ndef f():\n    return x.cuda()\n")
    assert out.startswith("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\nimport torch_xla\n@decorate\n")


def test_no_rewrite_no_import() -> None:
    src = "import torch\nx = torch.ones(2)\n"
    assert naive_port(src).text == src


@pytest.mark.parametrize("step", [
    "optimizer.step()", "self.optimizer_G.step()", "opt.step()", "optimiser.step()",
    "model_optim.step()", "q_optimizer.step()", "self._optimizer.step()", "optimizer.step(closure)",
    "optimizers[i].step()",
    "scaler.step(optimizer)", "self._scaler.step(model_optim)",  # AMP's optimizer step: handled
])
def test_sync_after_each_optimizer_step(step: str) -> None:
    out = body(f"import torch\nfor b in data:\n    loss.backward()\n    {step}\n    sched.step()\n")
    assert out == (f"import torch\nfor b in data:\n    loss.backward()\n    {step}\n"
                   "    torch_xla.sync()\n    sched.step()\n")


@pytest.mark.parametrize("call", ["scheduler.step()", "lr_scheduler.step(epoch)", "envs.step(action)",
                                  "scaler.step(x)", "self.conv1d.step(x, state)", "adopt.step()",
                                  "x = optimizer.step()"])
def test_no_sync_after_other_steps(call: str) -> None:
    src = f"import torch\n{call}\n"
    assert naive_port(src).text == src


def test_sync_on_a_shared_line_and_beside_a_comment() -> None:
    out = body("import torch\nif ok: optimizer.step()\noptimizer.step(); sched.step()\n"
               "optimizer.step()  # update\n")
    assert out == ("import torch\nif ok: optimizer.step(); torch_xla.sync()\n"
                   "optimizer.step(); torch_xla.sync(); sched.step()\n"
                   "optimizer.step()  # update\ntorch_xla.sync()\n")


def test_crlf_tabs_and_no_final_newline_kept() -> None:
    src = "import torch\r\nfor b in d:\r\n\tx = b.cuda()\r\n\toptimizer.step()"
    out = naive_port(src).text
    assert out == ("import torch\r\nimport torch_xla\r\nfor b in d:\r\n\tx = b.to(torch_xla.device())"
                   "\r\n\toptimizer.step()\r\n\ttorch_xla.sync()")


def test_non_ascii_positions() -> None:
    out = port('import torch\nprint("é ü"); x = "ß".cuda() if ok else y.cuda()\n')
    assert 'print("é ü"); x = "ß".to(torch_xla.device()) if ok else y.to(torch_xla.device())' in out


def test_python2_is_refused() -> None:
    with pytest.raises(NaivePortError, match="not Python 3"):
        naive_port("print 'hello'\n")


def test_the_rules_are_named() -> None:
    rules = naive_port("import torch\nx = x.cuda()\noptimizer.step()\n").rules
    assert rules == ["import torch_xla", ".cuda()", "sync after optimizer step"]


# -- predictions for the tasks ------------------------------------------------------------------

PRACTICE = list_tasks(kind="practice")


@pytest.mark.parametrize("task_id", PRACTICE)
def test_every_baseline_patch_applies_to_the_original(task_id: str) -> None:
    spec = find_task(task_id)
    for kind in KINDS:
        line = make_prediction(kind, spec).prediction
        assert line["agent"] == agent_name(kind) and line["model"] == "none"
        ws = apply_patch(spec, line["patch"])  # the harness's own: protected paths, git apply
        try:
            for rel in spec.protected:
                assert (ws.project / rel).read_bytes() == (original_tree(spec) / rel).read_bytes()
            changed = {rel: (ws.project / rel).read_text() for rel in
                       (p.relative_to(ws.project) for p in ws.project.rglob("*.py"))
                       if (ws.project / rel).read_bytes() != (original_tree(spec) / rel).read_bytes()}
            if kind == "noop":  # one comment line appended, nothing else
                (name, text), = changed.items()
                original = (original_tree(spec) / name).read_text()
                assert text == original + NOOP_COMMENT + "\n"
            if kind == "naive":
                assert changed and all("torch_xla" in t for t in changed.values())
                for text in changed.values():
                    ast.parse(text)
        finally:
            ws.cleanup()


def test_cli_writes_a_line_per_task_and_baseline_the_harness_accepts(tmp_path: Path, capsys) -> None:
    out = tmp_path / "preds.jsonl"
    assert main(["agent", "baseline", *KINDS, "--kind", "practice", "--out", str(out)]) == 0
    preds, errors = read_predictions(out)
    assert errors == []
    assert {(p.agent, p.task_id) for p in preds} == {(agent_name(k), t) for k in KINDS for t in PRACTICE}
    assert all(p.fields["model"] == "none" and p.fields["agent_cost_usd"] == 0.0 for p in preds)
    assert {p.fields["claimed_success"] for p in preds if p.agent == "baseline-noop"} == {False}
    selection = select(out)  # what `gpu2tpu evaluate` checks before running anything
    assert set(selection.specs) == set(PRACTICE)
    assert f"wrote {3 * len(PRACTICE)} prediction(s)" in capsys.readouterr().out


def test_append_refuses_a_line_already_there(tmp_path: Path, capsys) -> None:
    out = tmp_path / "preds.jsonl"
    assert main(["agent", "baseline", "noop", "--tasks", "cifar_amp", "--out", str(out)]) == 0
    assert main(["agent", "baseline", "gold", "--tasks", "cifar_amp", "--out", str(out)]) == 2
    assert "already has predictions; pass --append" in capsys.readouterr().err
    assert main(["agent", "baseline", "noop", "gold", "--tasks", "cifar_amp", "--out", str(out),
                 "--append"]) == 2
    assert "already holds baseline-noop/cifar_amp" in capsys.readouterr().err
    assert main(["agent", "baseline", "gold", "--tasks", "cifar_amp", "--out", str(out), "--append"]) == 0
    assert [p.agent for p in read_predictions(out)[0]] == ["baseline-noop", "baseline-gold"]


def test_unknown_task_is_named(tmp_path: Path, capsys) -> None:
    assert main(["agent", "baseline", "noop", "--tasks", "nope", "--out", str(tmp_path / "p")]) == 2
    assert "unknown task(s) 'nope'" in capsys.readouterr().err


def test_task_dir_and_protected_file(tasks_dir: Path, tmp_path: Path) -> None:
    """A task from --task-dir (tests/agent/conftest.py's toy: DEVICE = "cuda", data.py protected)."""
    out = tmp_path / "p.jsonl"
    assert main(["agent", "baseline", "naive", "noop", "--tasks", "toy", "--task-dir", str(tasks_dir),
                 "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["agent"] for x in lines] == ["baseline-naive", "baseline-noop"]
    assert 'DEVICE = torch_xla.device()' in lines[0]["patch"] and "data.py" not in lines[0]["patch"]
    assert "diff --git a/train.py b/train.py" in lines[1]["patch"]


def test_bad_gold_is_the_tasks_fault(tasks_dir: Path) -> None:
    from gpu2tpu.tasks.finder import add_task_dirs

    add_task_dirs([tasks_dir])
    with pytest.raises(BaselineError, match="migrations/gold does not fit the task"):
        make_prediction("gold", find_task("toy"))


def test_noop_file_is_the_entry_script_under_workdir(tmp_path: Path) -> None:
    spec = find_task("cifar_amp")
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    for rel in ("a.py", "src/train.py", "src/data.py"):
        (tree / rel).write_text("x = 1\n")
    assert noop_file(dataclasses.replace(spec, workdir="src", command=("train.py",)), tree) == "src/train.py"
    assert noop_file(dataclasses.replace(spec, command=("python", "-m", "pkg")), tree) == "a.py"
    protected = dataclasses.replace(spec, command=("src/train.py",), protected=("src/train.py", "a.py"))
    assert noop_file(protected, tree) == "src/data.py"


def test_help_has_an_example(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["agent", "baseline", "--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "gpu2tpu agent baseline noop naive gold --out" in out
    assert "gpu2tpu evaluate --predictions" in out and "gpu2tpu submit --predictions" in out


def test_needs_no_anthropic(tmp_path: Path) -> None:
    """Only the core install: the baseline command never imports the agent extra."""
    out = tmp_path / "p.jsonl"
    code = ("import sys; sys.modules['anthropic'] = None\n"
            "from gpu2tpu.cli import main\n"
            "sys.exit(main(['agent', 'baseline', 'noop', 'naive', '--tasks', 'cifar_amp', "
            f"'--out', {str(out)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_text().splitlines()) == 2


def test_a_task_that_cannot_be_prepared_is_left_out_and_named(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import gpu2tpu.agent.baselines as baselines

    def missing(kind: str, spec: object) -> None:
        raise BaselineError("source missing: set $GPU2TPU_SOURCES")

    monkeypatch.setattr(baselines, "make_prediction", missing)
    got = write_baselines(["noop"], [find_task("cifar_amp")], tmp_path / "p.jsonl", log=lambda _: None)
    assert got.written == []
    assert got.failed == {"baseline-noop/cifar_amp": "source missing: set $GPU2TPU_SOURCES"}


UPSTREAM = [t for t in list_tasks(kind="upstream")
            if find_task(t).source is not None and source_present(find_task(t).source) != "missing"]


@pytest.mark.slow  # materialises every upstream task's prepared tree (prepare.py)
@pytest.mark.parametrize("task_id", UPSTREAM)
def test_upstream_baselines_apply(task_id: str) -> None:
    spec = find_task(task_id)
    for kind in KINDS:
        ws = apply_patch(spec, make_prediction(kind, spec).prediction["patch"])
        ws.cleanup()
