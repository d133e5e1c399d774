"""The gold, except that utils.py's NativeScalerWithGradNormCount keeps torch.cuda.amp.GradScaler()
("loss scaling is harmless in fp32", and with torch_xla installed it does not disable itself): it
scales and unscales the XLA gradients exactly (a power of two), but GradScaler.step reads its
found-inf flag back to the host and main.py's `loss_scaler.state_dict()["scale"]` reads the scale,
every step (exit 0, numerics fine)."""

UTILS = "utils.py"


def apply(r):
    r.apply_gold(without=[(UTILS, "self._scaler = torch.cuda.amp.GradScaler()")])
