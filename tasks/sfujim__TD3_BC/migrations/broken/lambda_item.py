"""The gold, but the BC weight lambda = alpha / mean|Q| is taken to the host with .item() (a Python
float, "detached" the way many ports write it): one host read every actor step (exit 0, numerics
unchanged)."""


def apply(r):
    r.apply_gold()
    r.replace("TD3_BC.py", "lmbda = self.alpha/Q.abs().mean().detach()",
              "lmbda = self.alpha/Q.abs().mean().item()")
