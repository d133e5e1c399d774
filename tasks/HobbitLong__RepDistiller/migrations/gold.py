"""Gold migration of HobbitLong/RepDistiller (train_student.py, helper/loops.py) to PyTorch/XLA.

train_student.py moved the student, the teacher and the criteria with .cuda() when CUDA was
available, after building the SGD optimizer: on CUDA, Module.cuda() keeps the Parameter objects,
but moving a module from the CPU to XLA makes new ones, so the optimizer would hold the CPU
originals and never train the student. The gold picks torch_xla's device, keeps it in `opt` (which
the loops receive), moves the trainable modules before the optimizer is built, and the teacher and
the criteria where the original moved them. The loops move each batch where they called .cuda(); the
distillation step ends with one torch_xla.sync(), and its loss meter sums device tensors instead of
reading loss.item() every step (the meters' log line, at the first step of each epoch, reads them
then). Validation keeps its reads. Checkpoints are written with xm.save (CPU copies).
"""

MAIN = "train_student.py"
LOOPS = "helper/loops.py"


def move_to_xla(r, device="torch_xla.device()"):
    r.insert_after(MAIN, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.insert_after(MAIN, "opt = parse_option()", [f"opt.device = {device}  # the loops move batches there"])
    r.insert_before(MAIN, "optimizer = optim.SGD(trainable_list.parameters(),", [
        "# before the optimizer is built: moving to XLA replaces the Parameter objects",
        "trainable_list.to(opt.device)",
    ])
    r.replace(MAIN, "if torch.cuda.is_available():", "if opt.device is not None:")
    r.replace(MAIN, "module_list.cuda()", "module_list.to(opt.device)")
    r.replace(MAIN, "criterion_list.cuda()", "criterion_list.to(opt.device)")
    r.replace_each(MAIN, "torch.save(state, save_file)", "xm.save(state, save_file)", 3)
    r.insert_after(LOOPS, "import torch", ["import torch_xla"])
    # train_vanilla, train_distill and validate repeat these lines verbatim
    r.replace_each(LOOPS, "if torch.cuda.is_available():", "if opt.device is not None:", 3)
    r.replace_each(LOOPS, "input = input.cuda()", "input = input.to(opt.device)", 3)
    r.replace_each(LOOPS, "target = target.cuda()", "target = target.to(opt.device)", 3)
    r.replace(LOOPS, "index = index.cuda()", "index = index.to(opt.device)")
    r.replace(LOOPS, "contrast_idx = contrast_idx.cuda()", "contrast_idx = contrast_idx.to(opt.device)")


def sync_each_step(r):
    """train_distill (the second of the two training loops): one graph per step."""
    r.replace_each(LOOPS, "optimizer.step()", ["optimizer.step()", "torch_xla.sync()"], 2, which=[2])


def loss_meter_on_device(r):
    r.replace_each(LOOPS, "losses.update(loss.item(), input.size(0))",
                   "losses.update(loss.detach(), input.size(0))", 3, which=[2])


def apply(r):
    move_to_xla(r)
    sync_each_step(r)
    loss_meter_on_device(r)
