"""Harness-owned goal metric for salesforce/awd-lstm-lm: test loss (nats per word) of the trained
language model on the stand-in Penn Treebank's test split.

Builds the model with the pristine project at --project (RNNModel, LSTM, tied weights; sizes as
in task.yaml's command), loads the trained state_dict from --checkpoint, and evaluates the test
split as the project's own evaluate() does (batch size 1, chunks of bptt words, hidden state
carried across chunks, SplitCrossEntropyLoss without splits); writes the value to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

EMSIZE, NHID, NLAYERS, BPTT = 32, 64, 1, 5  # must match task.yaml's command


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.project)
    import data  # the pristine, verified tree
    import model as model_module
    from splitcross import SplitCrossEntropyLoss

    corpus = data.Corpus(os.path.join(args.project, "data", "penn"))
    ntokens = len(corpus.dictionary)
    model = model_module.RNNModel("LSTM", ntokens, EMSIZE, NHID, NLAYERS, 0.4, 0.3, 0.65, 0.1, 0.5, True)
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    # WeightDrop leaves `module.weight_hh_l0` registered as an alias of `..._raw` after an
    # evaluation forward (dropout off returns the raw parameter itself): not a weight of its own
    state = {k.removeprefix("module."): v.float() for k, v in state.items()
             if not k.endswith(".module.weight_hh_l0")}
    model.load_state_dict(state)
    model.eval()
    criterion = SplitCrossEntropyLoss(EMSIZE, splits=[], verbose=False)
    test = corpus.test.view(1, -1).t().contiguous()  # batch size 1, as the project's test pass
    hidden, total = model.init_hidden(1), 0.0
    with torch.no_grad():
        for i in range(0, test.size(0) - 1, BPTT):
            seq_len = min(BPTT, test.size(0) - 1 - i)
            x, y = test[i:i + seq_len], test[i + 1:i + 1 + seq_len].view(-1)
            output, hidden = model(x, hidden)
            total += seq_len * float(criterion(model.decoder.weight, model.decoder.bias, output, y))
    loss = total / test.size(0)
    with open(args.out, "w") as fh:
        json.dump({"schema_version": 1, "metric": "test_loss", "value": loss}, fh)
    print(f"test_loss {loss:.4f}")


if __name__ == "__main__":
    main()
