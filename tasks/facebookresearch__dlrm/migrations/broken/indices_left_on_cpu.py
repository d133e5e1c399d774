"""The gold migration, except that the inputs are moved as in the CPU branch of dlrm_wrap: the
dense features go to the device, the tables' offsets and indices stay on the CPU (upstream moves
them only under use_gpu). The first lookup on the XLA weights fails: the run crashes."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.SCRIPT,
              "return dlrm(X.to(device), lS_o.to(device), [S_i.to(device) for S_i in lS_i])",
              "return dlrm(X.to(device), lS_o, lS_i)")
