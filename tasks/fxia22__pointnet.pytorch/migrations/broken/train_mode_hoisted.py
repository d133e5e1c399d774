"""The gold, plus a "cleanup": classifier.train() is called once before the epochs instead of in
every step. The in-loop test pass (i % 10 == 0) switches the model to eval mode, so every later
training step runs with BatchNorm on running statistics and dropout off. On the CPU or CUDA that
would train on quietly; on XLA (torch_xla 2.9) the backward of an eval-mode BatchNorm1d fails
("The size of mean should be compatible with feature count, but the size of offset factor is
0"), so the run crashes at the second step."""

TRAIN = "utils/train_classification.py"


def apply(r):
    r.apply_gold()
    r.delete(TRAIN, "classifier = classifier.train()")
    r.insert_after(TRAIN, "classifier.to(device)", ["classifier.train()  # once, before training"])
