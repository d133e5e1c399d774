"""Harness-owned goal metric for salesforce/awd-lstm-lm: test loss (nats per word) of the trained
language model on the stand-in Penn Treebank's test split.

Builds the model with the pristine project at --project (RNNModel, LSTM, tied weights; sizes as
in task.yaml's command), loads the trained state_dict from --checkpoint, and evaluates the test
split as the project's own evaluate() does (batch size 1, chunks of bptt words, hidden state
carried across chunks, SplitCrossEntropyLoss without splits); writes the value to --out.
"""

from __future__ import annotations

import os

import task_kit
import torch

EMSIZE, NHID, NLAYERS, BPTT = 32, 64, 1, 5  # must match task.yaml's command


def measure(ckpt: task_kit.Checkpoint) -> float:
    import data  # the pristine, verified tree
    import model as model_module
    from splitcross import SplitCrossEntropyLoss

    corpus = data.Corpus(os.path.join(ckpt.project, "data", "penn"))
    ntokens = len(corpus.dictionary)
    model = model_module.RNNModel("LSTM", ntokens, EMSIZE, NHID, NLAYERS, 0.4, 0.3, 0.65, 0.1, 0.5, True)
    # WeightDrop leaves `module.weight_hh_l0` registered as an alias of `..._raw` after an
    # evaluation forward (dropout off returns the raw parameter itself): not a weight of its own
    model.load_state_dict({k: v.float() for k, v in ckpt.state().items()
                           if not k.endswith(".module.weight_hh_l0")})
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
    print(f"test_loss {loss:.4f}")
    return loss


if __name__ == "__main__":
    task_kit.evaluate_goal("test_loss", measure)
