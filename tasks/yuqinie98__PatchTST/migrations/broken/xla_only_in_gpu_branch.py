"""The gold's edits, but the XLA device replaces the CUDA device inside `if self.args.use_gpu:` of
Exp_Basic._acquire_device, and run_longExp.py sets use_gpu only when torch.cuda.is_available(): on
a TPU host that is False, so the experiment takes the CPU branch and trains there."""


def apply(r):
    basic = r.gold.BASIC
    r.apply_gold(without=[(basic, "device = torch.device('cpu')"), (basic, "print('Use CPU')")])
    r.replace(basic, "device = torch.device('cuda:{}'.format(self.args.gpu))", "device = xm.xla_device()")
    r.replace(basic, "print('Use GPU: cuda:{}'.format(self.args.gpu))", "print('Use XLA: {}'.format(device))")
