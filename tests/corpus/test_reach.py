"""Training-path hazards are counted in the code a run can reach, not in every imported line
(issue 43: counts per file included functions nothing calls and imported files' __main__ blocks)."""

from __future__ import annotations

from corpus_helpers import MIT, commit_files

from gpu2tpu.corpus.reach import reached_texts
from gpu2tpu.corpus.scanner import scan_path

TRAIN = """\
import torch
from model import Net, helper
from utils import *

def log(x):
    return x.item()

net = Net()
for step in range(3):
    loss = net(step)
    loss.backward()
    log(loss)
    helper(loss)
if __name__ == "__main__":
    print(loss.item())
"""
MODEL = '''\
import torch.nn as nn

class Net(nn.Module):
    """Calls visualize? No: a docstring names it, nothing calls it."""
    def forward(self, x):
        return x

    def visualize(self, x):
        return x.cpu().numpy()

class Unused(nn.Module):
    def forward(self, x):
        return x.nonzero()

def helper(x):
    return x.tolist()

def never(x):
    return x.unique()

if __name__ == "__main__":
    print(Net()(1).item())
'''


def _kept(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


def test_functions_nothing_names_and_imported_main_blocks_are_blanked():
    out = reached_texts({"train.py": TRAIN, "model.py": MODEL}, ["train.py"])
    model = "\n".join(_kept(out.texts["model.py"]))
    assert "x.tolist()" in model and "def forward" in model  # called; a hook of a used class
    assert "cpu().numpy()" not in model  # a method nothing calls
    assert "nonzero" not in model and "unique" not in model  # an unused class, an unused function
    assert "Net()(1).item()" not in model  # the __main__ block of an imported file
    train = out.texts["train.py"]
    assert "print(loss.item())" in train and "return x.item()" in train  # the entry's own main
    assert out.definitions == 8 and out.reached == 4  # log, Net, Net.forward, helper


def test_names_from_strings_configuration_and_registries_reach_code():
    lib = ("import registry\n"
           "def by_getattr(x):\n    return x.item()\n"
           "def by_config(x):\n    return x.cpu()\n"
           "@registry.register\ndef registered(x):\n    return x.nonzero()\n"
           "@staticmethod\ndef plain(x):\n    return x.unique()\n")
    entry = "import lib\nf = getattr(lib, 'by_getattr')\n"
    out = reached_texts({"main.py": entry, "lib.py": lib}, ["main.py"], ["by_config"])
    text = out.texts["lib.py"]
    assert "x.item()" in text and "x.cpu()" in text and "x.nonzero()" in text
    assert "x.unique()" not in text  # a plain decorator registers nothing


def test_a_base_class_of_a_used_class_is_reached_and_an_alias_counts_as_its_name():
    lib = ("class Base:\n    def shared(self):\n        return self.t.item()\n"
           "class Child(Base):\n    pass\n"
           "def original(x):\n    return x.cpu()\n")
    entry = "from lib import Child, original as renamed\nChild().shared()\nrenamed(1)\n"
    out = reached_texts({"main.py": entry, "lib.py": lib}, ["main.py"])
    assert "self.t.item()" in out.texts["lib.py"] and "x.cpu()" in out.texts["lib.py"]


def test_a_file_that_does_not_parse_is_kept_whole():
    py2 = "print 'hello'\ndef never(x):\n    return x.item()\n"
    out = reached_texts({"main.py": "import old\n", "old.py": py2}, ["main.py"])
    assert out.texts["old.py"] == py2 and out.unparsed == ["old.py"]


def test_the_scan_counts_reached_code_and_says_how_it_cut(tmp_path):
    commit_files(tmp_path / "r", {"LICENSE": MIT, "train.py": TRAIN, "model.py": MODEL,
                                  "utils.py": "def unused(x):\n    return x.item()\n"})
    scan = scan_path(tmp_path / "r", train_command="python train.py")
    counts = scan["training_path_counts"]
    # train.py: log's .item() and the entry's own main block; model.py: helper's .tolist()
    assert counts["item"] == 2 and counts["host_transfer"] == 1
    assert counts["nonzero"] == 0 and counts["unique"] == 0
    assert scan["counts"]["nonzero"] == 1 and scan["counts"]["item"] == 4  # the whole repository
    reach = scan["training_path_reach"]
    assert reach["files"] == 3 and reach["definitions"] == 9 and reach["unparsed"] == []


def test_a_name_built_by_an_f_string_reaches_every_definition_it_can_start():
    lib = ("class L0:\n    def __init__(self, kinds):\n"
           "        for k in kinds:\n            getattr(self, f'initialize_{k}')()\n"
           "    def initialize_mlp(self):\n        return self.z.item()\n"
           "    def unrelated(self):\n        return self.z.cpu()\n")
    out = reached_texts({"main.py": "from lib import L0\nL0(['mlp'])\n", "lib.py": lib}, ["main.py"])
    assert "self.z.item()" in out.texts["lib.py"] and "self.z.cpu()" not in out.texts["lib.py"]


def test_a_hydra_main_loads_its_config_and_the_classes_it_names(tmp_path):
    """drq: `@hydra.main(config_path='config.yaml')` and `agent: class: drq.DRQAgent` there; the
    agent's per-step host transfer was missed because the config was never read."""
    train = ("import hydra\nfrom omegaconf import DictConfig\n"
             "@hydra.main(config_path='config.yaml', strict=True)\n"
             "def main(cfg):\n    agent = hydra.utils.instantiate(cfg.agent)\n"
             "    for step in range(3):\n        agent.act(step)\n"
             "if __name__ == '__main__':\n    main()\n")
    drq = ("import utils\nclass DRQAgent:\n    def act(self, obs):\n        return utils.to_np(obs)\n"
           "class Unused:\n    def act2(self, obs):\n        return obs.item()\n")
    utils = "def to_np(t):\n    return t.cpu().detach().numpy()\n"
    commit_files(tmp_path / "r", {"LICENSE": MIT, "train.py": train, "drq.py": drq,
                                  "utils.py": utils, "config.yaml": "agent:\n  class: drq.DRQAgent\n"})
    scan = scan_path(tmp_path / "r", train_command="python train.py env=cartpole_swingup")
    assert scan["cuda_only"]["config_files"] == ["config.yaml"]
    assert scan["training_path_counts"]["host_transfer"] == 2  # .cpu() and .numpy()
    assert scan["training_path_counts"]["item"] == 0
