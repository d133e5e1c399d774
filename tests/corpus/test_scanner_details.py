"""Scanner details: training scripts named *_test.py, host-side numpy, indirect autocast,
hazards counted on the training path, and a command-given entry point."""

from __future__ import annotations

import pytest
from corpus_helpers import MIT, commit_files

from gpu2tpu.corpus.scanner import scan_path

LOOP = ("import torch\nfrom model import Net\n"
        "if __name__ == '__main__':\n    loss.backward()\n    optimizer.step()\n")


def test_a_test_named_script_with_an_optimizer_loop_is_a_training_entry(tmp_path):
    commit_files(tmp_path / "r", {"LICENSE": MIT, "add_test.py": LOOP, "model.py": "x = 1\n",
                                  "eval_test.py": "import torch\nprint(model(x))\n"})
    scan = scan_path(tmp_path / "r")
    assert scan["entry_points"] == {"train": ["add_test.py"], "eval": ["eval_test.py"]}
    assert "no_train_entry" not in scan["flags"]


def test_numpy_calls_and_evaluation_code_do_not_make_dynamic_shapes(tmp_path):
    files = {"LICENSE": MIT, "train.py": LOOP, "model.py": "import numpy as np\n"
             "idx = np.nonzero(a)\nu = np.unique(a)\n",
             "sample.py": "y = x[x > 0]\nz = t.nonzero()\n"}
    commit_files(tmp_path / "r", files)
    scan = scan_path(tmp_path / "r", train_command="python train.py")
    assert scan["counts"]["nonzero"] == 1 and scan["counts"]["unique"] == 0  # torch only
    assert scan["counts"]["bool_mask_index"] == 1
    assert scan["training_path_counts"]["nonzero"] == 0  # sample.py is not on the path
    assert "dynamic_shapes" not in scan["flags"]
    files["model.py"] += "import sample\n"
    commit_files(tmp_path / "r", files)
    scan = scan_path(tmp_path / "r", train_command="python train.py")
    assert scan["training_path_counts"]["nonzero"] == 1 and "dynamic_shapes" in scan["flags"]


def test_autocast_passed_as_a_callable_counts(tmp_path):
    commit_files(tmp_path / "r", {"LICENSE": MIT, "train.py": LOOP, "model.py":
                                  "from torch.cuda.amp import autocast\n"
                                  "ctx = partial(autocast, enabled=False)\n"})
    scan = scan_path(tmp_path / "r")
    assert scan["counts"]["autocast"] == 1 and "amp" in scan["flags"]


def test_a_command_given_entry_point_clears_no_train_entry(tmp_path):
    commit_files(tmp_path / "r", {"LICENSE": MIT, "src/go.py": "import torch\n"})
    assert "no_train_entry" in scan_path(tmp_path / "r")["flags"]
    scan = scan_path(tmp_path / "r", train_command="cd src && python go.py")
    assert scan["cuda_only"]["training_roots"] == ["src/go.py"]
    assert "no_train_entry" not in scan["flags"]


@pytest.mark.parametrize("line, hits", [
    ('    trainer_config["distributed_backend"] = "ddp"', 1),  # taming-transformers main.py:422
    ('trainer = pl.Trainer(accelerator="ddp", gpus=2)', 1),
    ("trainer = Trainer(strategy='ddp_find_unused_parameters_false')", 1),
    ('parser.add_argument("--ddp", action="store_true")', 0),  # a flag's name is no backend choice
    ('strategy = "dp"', 0),
])
def test_lightning_ddp_chosen_by_name_counts_as_distributed(line: str, hits: int) -> None:
    from collections import Counter

    from gpu2tpu.corpus.patterns import count_constructs

    counts: Counter[str] = Counter()
    count_constructs(line + "\n", counts, only=("distributed",))
    assert counts["distributed"] == hits


@pytest.mark.parametrize(("line", "hits"), [
    ("y = x[x > 0]", 1),                                   # a comparison
    ("out[out < v[:, [-1]]] = 0", 1),                      # nested brackets inside the mask
    ("y = x[~valid_mask]", 1),                             # a name that says mask, negated
    ("y = x[self.pad_mask]", 1),
    ("y = x[(a > 0) & (b < 1)]", 1),
    ("ids = [i[1] for i in pairs if i[0] == k]", 0),       # a comprehension's filter
    ("mask[mask_idx] = 1", 0),                             # positions, not a mask
    ("p = vocab['<pad>']", 0),                             # a string key with a '<'
    ("y = x[a][b]", 0),
])
def test_boolean_mask_indexing_is_read_from_the_parsed_code(line: str, hits: int) -> None:
    from collections import Counter

    from gpu2tpu.corpus.patterns import count_constructs

    counts: Counter[str] = Counter()
    count_constructs(line + "\n", counts, only=("bool_mask_index",))
    assert counts["bool_mask_index"] == hits


def test_code_that_does_not_parse_falls_back_to_the_mask_regex() -> None:
    from gpu2tpu.corpus.patterns import bool_mask_lines, construct_sites

    py2 = "print 'x'\ny = x[x > 0]\n"
    assert bool_mask_lines(py2) is None
    assert construct_sites(py2, ("bool_mask_index",)) == [("bool_mask_index", 2)]


@pytest.mark.parametrize(("line", "hits"), [
    ("y = x.cpu().numpy().tolist()", 1),                   # one chain is one transfer
    ("y = x.detach().cpu().numpy()", 1),
    ("y = x.cpu().detach().numpy()", 1),
    ("y = x.cpu().byte().permute(1, 2, 0).numpy()", 1),   # clovaai/cutblur solver.py:123
    ("n = x.cpu().view(-1).item()", 0),
    ("a, b = x.cpu(), y.numpy()", 2),
    ("n = x.cpu().item()", 0),                             # the .item() sync alone
])
def test_a_chain_of_host_transfers_counts_once(line: str, hits: int) -> None:
    from collections import Counter

    from gpu2tpu.corpus.patterns import count_constructs

    counts: Counter[str] = Counter()
    count_constructs(line + "\n", counts, only=("host_transfer",))
    assert counts["host_transfer"] == hits


def test_an_entry_that_does_not_parse_is_counted_whole(tmp_path):
    # quark0/darts cnn/train_search.py:140: `.cuda(async=True)` is a syntax error on Python 3.7+
    train = "import torch\ny = x.cuda(async=True)\nloss.backward()\nprint(z.cpu())\n"
    commit_files(tmp_path / "r", {"LICENSE": MIT, "train.py": train})
    scan = scan_path(tmp_path / "r", train_command="python train.py")
    assert scan["training_path_counts"]["host_transfer"] == 1
    assert scan["training_path_reach"]["unparsed"] == ["train.py"]


def test_text_in_a_triple_quoted_string_is_not_code() -> None:
    # yenchenlin/nerf-pytorch run_nerf.py:162: code kept in a docstring
    from gpu2tpu.corpus.patterns import construct_sites, without_comments

    code = 'def f(x):\n    """old:\n    y = x.cpu()\n    """\n    return x.numpy()  # x.tolist()\n'
    kept = without_comments(code)
    assert kept.count("\n") == code.count("\n") and '"""' in kept
    assert construct_sites(kept, ("host_transfer",)) == [("host_transfer", 5)]


@pytest.mark.parametrize(("line", "construct", "hits"), [
    # counts are call sites, whatever the receiver (the statement says so since scanner 2.8)
    ("dpr = [x.item() for x in torch.linspace(0, rate, depth)]", "item", 1),
    ("loss_value = loss.item()", "item", 1),
    # one chain through an attribute is one transfer (sfujim/TD3 TD3.py:101)
    ("return self.actor(state).cpu().data.numpy().flatten()", "host_transfer", 1),
    ("a, b = x.cpu(), y.numpy()", "host_transfer", 2),
    ("v = x.cpu().data.item()", "host_transfer", 0),
])
def test_counts_are_call_sites_and_a_chain_is_one(line: str, construct: str, hits: int) -> None:
    from collections import Counter

    from gpu2tpu.corpus.patterns import count_constructs

    counts: Counter[str] = Counter()
    count_constructs(line + "\n", counts, only=(construct,))
    assert counts[construct] == hits


@pytest.mark.parametrize(("code", "lines"), [
    # a name every assignment in its function makes a mask (kakaobrain/sparse-detr coco.py:97)
    ("def f(boxes, classes):\n    keep = (boxes[:, 3] > boxes[:, 1])\n"
     "    return boxes[keep], classes[keep]\n", [3, 3]),
    # reassigned to something else (indices from nms) in the same function: no mask
    ("def f(boxes, s):\n    keep = s > 0.5\n    keep = nms(boxes, s)\n    return boxes[keep]\n", []),
    # the same name in another function says nothing here
    ("def f(x):\n    keep = x > 0\n    return keep\n\ndef g(b, keep):\n    return b[keep]\n", []),
    # a tuple index with a reduction to booleans (snap-stanford/GreaseLM modeling_greaselm.py:236)
    ("def f(mask):\n    mask[mask.all(1), 0] = 0\n", [2]),
    # a mask name that ends like a position but says bool (MCG-NJU/VideoMAE engine_for_pretraining.py:53)
    ("def f(v, bool_masked_pos):\n    return v[bool_masked_pos]\n", [2]),
    ("def f(m, mask_pos):\n    return m[mask_pos]\n", []),
])
def test_boolean_masks_held_in_names_and_tuples(code: str, lines: list[int]) -> None:
    from gpu2tpu.corpus.patterns import bool_mask_lines

    assert bool_mask_lines(code) == lines
