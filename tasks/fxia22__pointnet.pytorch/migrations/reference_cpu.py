"""The least edit that runs the original train_classification.py on a machine without CUDA
(reference runs only): the model and every batch were moved with .cuda() unconditionally; those
calls go, so everything stays on the CPU. model.py already checks is_cuda. Nothing else changes."""

TRAIN = "utils/train_classification.py"


def apply(r):
    r.replace(TRAIN, "classifier.cuda()", "pass  # gpu2tpu: CPU reference")
    r.replace_each(TRAIN, "points, target = points.cuda(), target.cuda()",
                   "pass  # gpu2tpu: CPU reference", 3)
