"""Goal metric for salesforce/CodeT5: the trained model's perplexity on 64 held-out stand-in
functions (CodeT5/data/summarize/python/test.jsonl, which the command never reads), lower is better.

It is the project's own dev metric, eval_ppl (run_gen.py eval_ppl_epoch): the examples are read
and tokenised with the project's read_summarize_examples and convert_examples_to_features (source
and target padded to the command's 96 and 16 tokens, the target's padding kept in the labels as
the project keeps it), the T5ForConditionalGeneration of the prepared gpu2tpu_model folder is
loaded with the trained weights and run in eval mode over batches of 16 (the command's
--eval_batch_size), and the value is exp of the mean of the batches' losses.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

HELDOUT = Path("data") / "summarize" / "python" / "test.jsonl"
MODEL = "gpu2tpu_model"
# the command's --max_source_length, --max_target_length and --eval_batch_size
SOURCE_LEN, TARGET_LEN, BATCH = 96, 16, 16


def measure(ckpt: Checkpoint) -> float:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    import torch

    code = ckpt.project / "CodeT5"
    sys.path.insert(0, str(code))
    from _utils import convert_examples_to_features, read_summarize_examples  # the pristine tree
    from transformers import RobertaTokenizer, T5Config, T5ForConditionalGeneration

    model = T5ForConditionalGeneration(T5Config.from_pretrained(code / MODEL))
    try:
        model.load_state_dict(ckpt.state())
    except RuntimeError as exc:
        raise GoalUnavailable(f"the checkpoint does not load into the T5 model: {exc}") from exc
    tokenizer = RobertaTokenizer.from_pretrained(code / MODEL)
    args = SimpleNamespace(model_type="codet5", add_task_prefix=False, task="summarize",
                           sub_task="python", add_lang_ids=False, max_source_length=SOURCE_LEN,
                           max_target_length=TARGET_LEN)
    examples = read_summarize_examples(str(code / HELDOUT), -1)
    features = [convert_examples_to_features((ex, i, tokenizer, args, "dev"))
                for i, ex in enumerate(examples)]
    source = torch.tensor([f.source_ids for f in features], dtype=torch.long)
    target = torch.tensor([f.target_ids for f in features], dtype=torch.long)
    pad = tokenizer.pad_token_id
    model.eval()
    losses = []
    with torch.no_grad():
        for start in range(0, len(features), BATCH):
            src, tgt = source[start:start + BATCH], target[start:start + BATCH]
            out = model(input_ids=src, attention_mask=src.ne(pad), labels=tgt,
                        decoder_attention_mask=tgt.ne(pad))
            losses.append(float(out.loss))
    ppl = float(np.exp(sum(losses) / len(losses)))
    print(f"held-out perplexity {ppl:.4f} over {len(features)} functions ({len(losses)} batches)")
    return ppl


if __name__ == "__main__":
    evaluate_goal("eval_ppl", measure)
