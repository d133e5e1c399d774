"""The gold, except that only the trained modules move: `trainable_list.to(device)` where the gold
moves module_list, "the teacher is frozen, it need not move". The teacher, appended to module_list
after the optimizer was built, stays on the CPU and its forward fails on the XLA batch (the
teacher's validation, before training, already)."""

MAIN = "train_student.py"


def apply(r):
    r.apply_gold(without=[(MAIN, "module_list.cuda()")])
    r.replace(MAIN, "module_list.cuda()", "trainable_list.to(opt.device)  # the frozen teacher stays")
