"""Gold migration of ermongroup/ddim (main.py, runners/diffusion.py) to PyTorch/XLA.

main.py picks the device (config.device) and hands it to the runner, which otherwise picks its own
CUDA-or-CPU device again. DataParallel stays, a pass-through without CUDA devices, so the
state_dict keeps its `module.` keys as the project's checkpoints have them. The noise (randn_like)
is drawn on the device, the antithetic timesteps on the host as before. The training loop no
longer reads the loss every step (the log line's loss.item() and TensorBoard's add_scalar, which
reads a tensor too): both log it at the steps that save a checkpoint, where the step is read back
anyway. Each step ends with one torch_xla.sync() after the optimizer and EMA updates, so one graph
is compiled and reused; checkpoints are written with xm.save (CPU copies).
"""

MAIN = "main.py"
RUNNER = "runners/diffusion.py"


def device_to_xla(r, device="torch_xla.device()"):
    """main.py chooses `device` and passes it to the runner."""
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.replace(MAIN, 'device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")',
              f"device = {device}")
    r.replace(MAIN, "runner = Diffusion(args, config)",
              "runner = Diffusion(args, config, device=config.device)")


def loop_to_xla(r, sync=True):
    """One sync per step (`sync`); the loss read only where a checkpoint is saved; xm.save."""
    r.insert_after(RUNNER, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.delete(RUNNER, 'tb_logger.add_scalar("loss", loss, global_step=step)')
    r.replace(RUNNER, 'f"step: {step}, loss: {loss.item()}, data time: {data_time / (i+1)}"',
              'f"step: {step}, data time: {data_time / (i+1)}"')
    if sync:
        r.insert_before(RUNNER, "if step % self.config.training.snapshot_freq == 0 or step == 1:",
                        ["torch_xla.sync()"])
    r.insert_after(RUNNER, "if step % self.config.training.snapshot_freq == 0 or step == 1:", [
        "    loss_value = loss.item()",
        '    tb_logger.add_scalar("loss", loss_value, global_step=step)',
        '    logging.info(f"step: {step}, loss: {loss_value}")',
    ])
    r.replace(RUNNER, "torch.save(", "xm.save(")
    r.replace(RUNNER, 'torch.save(states, os.path.join(self.args.log_path, "ckpt.pth"))',
              'xm.save(states, os.path.join(self.args.log_path, "ckpt.pth"))')


def apply(r):
    device_to_xla(r)
    loop_to_xla(r)
