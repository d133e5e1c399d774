"""Broken: the gold, except that --gpu_ids is read as the project's CPU mode (no ids kept), so the
networks, the batches and the losses stay on the host: the whole run trains on the CPU (exit 0)."""


def apply(r):
    r.apply_gold(without=[(r.gold.OPTIONS, r.gold.SET_DEVICE)])
    r.replace(r.gold.OPTIONS, "opt.gpu_ids.append(id)", "pass  # no CUDA here: run as with --gpu_ids -1")
