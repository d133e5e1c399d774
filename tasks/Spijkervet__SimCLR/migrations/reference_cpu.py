"""The least edit that runs the original main.py on a machine without CUDA (reference runs only).

main.py picks cuda:0 or the CPU for the model, but moves both views of every batch with
.cuda(non_blocking=True), unconditionally: those two calls become .to(args.device), the device
main.py chose. Nothing else changes.
"""

MAIN = "main.py"


def apply(r):
    for view in ("x_i", "x_j"):
        r.replace(MAIN, f"{view} = {view}.cuda(non_blocking=True)",
                  f"{view} = {view}.to(args.device)  # gpu2tpu: CPU reference")
