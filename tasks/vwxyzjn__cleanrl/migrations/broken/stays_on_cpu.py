"""Every edit of the gold, but the device line keeps the CUDA test
(`"cuda" if torch.cuda.is_available() and args.cuda else "cpu"`): with no GPU the agent, the
buffers and the training stay on the CPU (exit 0)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")')
    gold.clipfrac_on_device(r)
