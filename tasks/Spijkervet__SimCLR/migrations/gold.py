"""Gold migration of Spijkervet/SimCLR (main.py, model.py) to PyTorch/XLA.

The device becomes torch_xla's (main.py chose cuda:0 or the CPU); both views of each batch move
with .to(args.device) where the original called .cuda(non_blocking=True), and every optimizer
step ends with one torch_xla.sync(), so one graph is compiled and reused. The per-step loss reads
(loss.item() for the TensorBoard scalar and the epoch sum) become device tensors gathered in a list
and read once at the end of the epoch, when the same per-step scalars are written. NT_Xent's
correlation mask stays a CPU tensor: indexing with a constant host mask lowers to a fixed gather,
where a mask on the device would need nonzero() (a CPU fallback) every step. Checkpoints are saved
with xm.save (CPU copies).
"""

MAIN = "main.py"
MODEL = "model.py"


def move_to_xla(r, device="torch_xla.device()"):
    """The device and both views on it; checkpoints as CPU copies."""
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.replace(MAIN, 'args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")',
              f"args.device = {device}")
    r.replace(MAIN, "x_i = x_i.cuda(non_blocking=True)", "x_i = x_i.to(args.device)")
    r.replace(MAIN, "x_j = x_j.cuda(non_blocking=True)", "x_j = x_j.to(args.device)")
    r.insert_after(MODEL, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(MODEL, "torch.save(model.module.state_dict(), out)", "xm.save(model.module.state_dict(), out)")
    r.replace(MODEL, "torch.save(model.state_dict(), out)", "xm.save(model.state_dict(), out)")


def sync_each_step(r):
    r.insert_after(MAIN, "optimizer.step()", ["torch_xla.sync()"])


def losses_read_per_epoch(r):
    """The per-step loss scalars stay on the device; one read per epoch writes them all."""
    r.insert_after(MAIN, "loss_epoch = 0", ["step_losses = []  # device tensors, read once per epoch"])
    r.delete(MAIN, 'writer.add_scalar("Loss/train_epoch", loss.item(), args.global_step)')
    r.replace(MAIN, "loss_epoch += loss.item()", "step_losses.append(loss.detach())")
    r.replace(MAIN, "return loss_epoch", [
        "values = torch.stack(step_losses).cpu().tolist()  # the epoch's one host read",
        "if args.nr == 0:",
        "    first = args.global_step - len(values)",
        "    for i, value in enumerate(values):",
        '        writer.add_scalar("Loss/train_epoch", value, first + i)',
        "loss_epoch = sum(values)",
        "return loss_epoch",
    ])


def apply(r):
    move_to_xla(r)
    sync_each_step(r)
    losses_read_per_epoch(r)
