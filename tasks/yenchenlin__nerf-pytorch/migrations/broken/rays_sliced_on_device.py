"""The gold, but the shuffled training rays are moved to the device as the project does, and each
step's batch is sliced there at the offset i_batch, which moves by N_rand every step: the slice's
start is part of the graph, so every step of an epoch compiles a new one."""


def apply(r):
    g = r.gold
    r.apply_gold(without=[(g.TRAIN, g.RAYS_TO_DEVICE), (g.TRAIN, g.BATCH)])
