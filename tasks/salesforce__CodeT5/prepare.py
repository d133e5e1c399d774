"""Stand-in CodeSearchNet (python) summarisation data and a tiny random T5 for salesforce/CodeT5.

run_gen.py --task summarize --sub_task python reads `{data_dir}/summarize/python/{train,valid,
test}.jsonl` (utils.get_filenames), one JSON object a line whose `code_tokens` and
`docstring_tokens` lists it joins into the source and the target (_utils.read_summarize_examples).
The real data needs a download; this writes functions of the same shape whose one-line summary is
learnable from the code: the function's name is `<verb>_<noun>_<noun>` and its docstring says the
verb's phrase and the two nouns ("Return the user name ."), sometimes with the argument's name.

- CodeT5/data/summarize/python: train.jsonl (160 functions: 20 batches of 8), valid.jsonl (32: the
  dev perplexity run_gen.py computes after each epoch) and test.jsonl (64 other functions, read
  only by evaluate.py; the command does not pass --do_test).
- CodeT5/gpu2tpu_model: the project's own BPE tokenizer (tokenizer/salesforce/codet5-vocab.json and
  codet5-merges.txt, as vocab.json and merges.txt: RobertaTokenizer.from_pretrained reads these
  names) and a randomly initialised tiny T5ForConditionalGeneration in the format from_pretrained
  reads (config.json + model.safetensors), with CodeT5's special ids (pad 0, </s> 2, decoder start
  0) and tied input/output embeddings: 32000 x 32 embeddings, 2+2 layers, 4 heads, d_ff 64 (no
  pretrained weights can be downloaded). Dropout 0 instead of T5's default 0.1: see task.yaml.
- CodeT5/gpu2tpu_out: the folder the command names as its output, cache, result and summary
  folder (run_gen.py opens summary.log there without creating it); empty but for a note, so each
  run, in its own copy of the tree, tokenises the data afresh instead of loading a cache.

Deterministic: random.Random seeds 0, 1, 2 for the splits, torch seed 0 for the weights.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import prepare_main, require  # noqa: E402

DATA = Path("CodeT5") / "data" / "summarize" / "python"
MODEL = Path("CodeT5") / "gpu2tpu_model"
OUT = Path("CodeT5") / "gpu2tpu_out"
TOKENIZER = Path("CodeT5") / "tokenizer" / "salesforce"
SPLITS = {"train.jsonl": (160, 0), "valid.jsonl": (32, 1), "test.jsonl": (64, 2)}  # (functions, seed)

VERBS = {"get": "Return", "set": "Set", "load": "Load", "save": "Save", "parse": "Parse",
         "update": "Update", "create": "Create", "delete": "Delete", "check": "Check", "find": "Find",
         "read": "Read", "write": "Write", "build": "Build", "convert": "Convert",
         "validate": "Validate", "compute": "Compute"}
NOUNS = ["user", "name", "file", "path", "config", "data", "value", "list", "item", "key", "token",
         "model", "index", "count", "size", "date", "message", "request", "response", "node",
         "graph", "table", "row", "column", "image", "label", "score", "batch", "cache", "session"]
ARGS = ["key", "path", "value", "timeout", "default", "force", "name", "options"]


def function(rng: random.Random) -> dict:
    verb = rng.choice(sorted(VERBS))
    first, second = rng.sample(NOUNS, 2)
    arg = rng.choice(ARGS)
    name = f"{verb}_{first}_{second}"
    code = ["def", name, "(", "self", ",", arg, ")", ":",
            "result", "=", "self", ".", f"_{first}s", ".", verb, "(", arg, ")"]
    if rng.random() < 0.5:
        code += ["if", "result", "is", "None", ":", "raise", "ValueError", "(", f"'{second}'", ")"]
    for _ in range(rng.randrange(5)):  # bodies of varied length, as real functions have
        noun = rng.choice(NOUNS)
        code += rng.choice([["self", ".", f"_{noun}", "=", "None"],
                            ["logger", ".", "debug", "(", f"'{noun} %s'", ",", arg, ")"],
                            [noun, "=", "result", ".", "get", "(", f"'{noun}'", ")"]])
    code += ["return", "result"]
    doc = [VERBS[verb], "the", first, second]
    if rng.random() < 0.5:
        doc += ["for", "the", "given", arg]
    return {"repo": "gpu2tpu/standin", "path": f"{first}/{second}.py", "func_name": name,
            "language": "python", "code_tokens": code, "docstring_tokens": doc + ["."]}


def tiny_t5(folder: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=32000, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                      num_decoder_layers=2, num_heads=4, dropout_rate=0.0, pad_token_id=0,
                      eos_token_id=2, decoder_start_token_id=0)
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder, safe_serialization=True)


def write(root: Path) -> None:
    require(root, "CodeT5/run_gen.py", str(TOKENIZER / "codet5-vocab.json"),
            str(TOKENIZER / "codet5-merges.txt"))
    data = root / DATA
    data.mkdir(parents=True, exist_ok=True)
    for name, (count, seed) in SPLITS.items():
        rng = random.Random(seed)
        lines = [json.dumps(function(rng)) for _ in range(count)]
        (data / name).write_text("\n".join(lines) + "\n")
    model = root / MODEL
    model.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / TOKENIZER / "codet5-vocab.json", model / "vocab.json")
    shutil.copyfile(root / TOKENIZER / "codet5-merges.txt", model / "merges.txt")
    tiny_t5(model)
    (root / OUT).mkdir(parents=True, exist_ok=True)
    (root / OUT / "README.txt").write_text("run_gen.py's output, cache, result and summary folder\n")


if __name__ == "__main__":
    prepare_main(write, "salesforce/CodeT5")
