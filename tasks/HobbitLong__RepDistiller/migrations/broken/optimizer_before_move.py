"""The gold, except that the modules move where the original moved them, after SGD was built from
the student's parameters (on CUDA, Module.cuda() keeps the Parameter objects): moving to XLA makes
new ones, so the optimizer steps the CPU originals, which get no gradient, and the student on the
device never trains (exit 0)."""


def apply(r):
    r.apply_gold(without=[("train_student.py", "optimizer = optim.SGD(trainable_list.parameters(),")])
