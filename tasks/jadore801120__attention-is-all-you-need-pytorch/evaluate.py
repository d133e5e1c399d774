"""Goal metric for jadore801120/attention-is-all-you-need-pytorch: the trained Transformer's per-token
negative log-likelihood (teacher forcing, no label smoothing, padding excluded) on the stand-in test
pairs, which training never sees.

Builds the Transformer from the pristine project with the sizes of task.yaml's command and the shared
vocabulary of the stand-in pickle (read with the project's torchtext), loads the trained state_dict and
scores the pickle's 128 test pairs in batches of 64, as train.py's validation scores its pairs.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, evaluate_goal  # noqa: E402

SIZES = dict(d_word_vec=32, d_model=32, d_inner=64, n_layers=2, n_head=4, d_k=8, d_v=8, dropout=0.1,
             trg_emb_prj_weight_sharing=True, emb_src_trg_weight_sharing=True, scale_emb_or_prj="prj")


def measure(ckpt: Checkpoint) -> float:
    import torch
    import torch.nn.functional as F

    assert ckpt.project is not None
    import transformer.Constants as Constants  # the pristine, verified tree
    from transformer.Models import Transformer

    data = pickle.loads((ckpt.project / "data" / "standin_deen_shr.pkl").read_bytes())
    src_field, trg_field = data["vocab"]["src"], data["vocab"]["trg"]
    pad = trg_field.vocab.stoi[Constants.PAD_WORD]
    model = Transformer(len(src_field.vocab), len(trg_field.vocab), src_pad_idx=pad, trg_pad_idx=pad, **SIZES)
    model.load_state_dict({k: v.float() for k, v in ckpt.state().items()})
    model.eval()
    total, words = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(data["test"]), 64):
            batch = data["test"][i:i + 64]
            src = src_field.process([ex.src for ex in batch], device="cpu").transpose(0, 1)
            trg = trg_field.process([ex.trg for ex in batch], device="cpu").transpose(0, 1)
            gold = trg[:, 1:].contiguous().view(-1)
            pred = model(src, trg[:, :-1])
            total += float(F.cross_entropy(pred, gold, ignore_index=pad, reduction="sum"))
            words += int(gold.ne(pad).sum())
    return total / words


if __name__ == "__main__":
    evaluate_goal("nll", measure)
