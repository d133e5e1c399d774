"""Every edit of the gold but the initialisation: LeNet moves to the XLA device first, so
`weights_init` draws its weights from the device's generator, not the seeded host one."""


def apply(r):
    r.gold.to_xla(r)
