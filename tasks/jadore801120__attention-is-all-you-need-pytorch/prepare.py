"""Stand-in translation data for jadore801120/attention-is-all-you-need-pytorch, in the pickle format
train.py reads (what preprocess.py writes with -share_vocab), plus the launcher that runs it.

data/standin_deen_shr.pkl: {'settings': Namespace(max_len=...), 'vocab': {'src': Field, 'trg': Field},
'train': [Example], 'valid': [Example], 'test': [Example]}, built with the project's own torchtext
(0.6, pure Python): Fields with the project's special tokens (<blank>, <unk>, <s>, </s>), lower-cased,
whitespace-tokenised, their vocabularies built from the training sentences and merged as preprocess.py
merges them (-share_vocab), so -embs_share_weight holds. 640 training, 128 validation and 128 test
pairs. The "language": a source sentence is 3 + Poisson(3) words s0..s19 (at most 20, the settings'
max_len), so a batch's longest sentence varies from batch to batch; its translation maps each word to
its own target word t0..t19, and every adjacent pair of words swaps order, so attention must look
across positions. Deterministic (numpy seed).

gpu2tpu_aiayn.py (harness-owned, protected): the examples of a bare torchtext Dataset (train.py builds
one from the pickled lists) have no sort_key, and the validation BucketIterator sorts them (torchtext
raises "'<' not supported between instances of 'Example'"); the launcher gives Dataset the sort key
torchtext's TranslationDataset uses (source and target lengths interleaved), then runs train.py
unchanged with its own arguments.
"""

from __future__ import annotations

import pickle
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import prepare_main  # noqa: E402

WORDS, MIN_LEN, MAX_LEN = 20, 3, 20
N_TRAIN, N_VALID, N_TEST = 640, 128, 128
PICKLE = Path("data") / "standin_deen_shr.pkl"
PAD, UNK, BOS, EOS = "<blank>", "<unk>", "<s>", "</s>"  # transformer/Constants.py
LAUNCHER = "gpu2tpu_aiayn.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

train.py wraps the pickled examples in a bare torchtext Dataset, which has no sort_key, and the
validation BucketIterator sorts by it; this gives Dataset the key torchtext's TranslationDataset uses,
then runs the project's script unchanged: python gpu2tpu_aiayn.py SCRIPT ARGS...
"""
import runpy
import sys

from torchtext import data

data.Dataset.sort_key = staticmethod(lambda ex: data.interleave_keys(len(ex.src), len(ex.trg)))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def pairs(n: int, seed: int) -> list[tuple[str, str]]:
    """n (source, target) sentence pairs of the stand-in language."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = rng.integers(0, WORDS, size=min(MIN_LEN + int(rng.poisson(3.0)), MAX_LEN))
        target = list(words)
        for i in range(0, len(target) - 1, 2):
            target[i], target[i + 1] = target[i + 1], target[i]
        out.append((" ".join(f"s{w}" for w in words), " ".join(f"t{w}" for w in target)))
    return out


def write(root: Path) -> None:
    from torchtext import data

    src = data.Field(lower=True, pad_token=PAD, init_token=BOS, eos_token=EOS, unk_token=UNK)
    trg = data.Field(lower=True, pad_token=PAD, init_token=BOS, eos_token=EOS, unk_token=UNK)
    fields = [("src", src), ("trg", trg)]
    splits = {name: [data.Example.fromlist(list(p), fields) for p in pairs(n, seed)]
              for name, n, seed in (("train", N_TRAIN, 1), ("valid", N_VALID, 2), ("test", N_TEST, 3))}
    train = data.Dataset(splits["train"], fields)
    src.build_vocab(train.src, min_freq=1)
    trg.build_vocab(train.trg, min_freq=1)
    for word in list(src.vocab.stoi):  # preprocess.py's -share_vocab merge
        if word not in trg.vocab.stoi:
            trg.vocab.stoi[word] = len(trg.vocab.stoi)
    trg.vocab.itos = [None] * len(trg.vocab.stoi)
    for word, i in trg.vocab.stoi.items():
        trg.vocab.itos[i] = word
    src.vocab.stoi, src.vocab.itos = trg.vocab.stoi, trg.vocab.itos
    settings = Namespace(lang_src="de", lang_trg="en", save_data=str(PICKLE), data_src=None, data_trg=None,
                         max_len=MAX_LEN, min_word_count=1, keep_case=False, share_vocab=True)
    blob = {"settings": settings, "vocab": {"src": src, "trg": trg}, **splits}
    (root / PICKLE).parent.mkdir(parents=True, exist_ok=True)
    (root / PICKLE).write_bytes(pickle.dumps(blob, protocol=4))
    (root / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "jadore801120/attention-is-all-you-need-pytorch")
