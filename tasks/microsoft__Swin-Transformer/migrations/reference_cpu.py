"""The least edit that runs the original main.py on a machine without CUDA (reference runs only).

main.py pins a GPU (torch.cuda.set_device), joins an NCCL process group, moves the model and the
batches with .cuda() and gives DistributedDataParallel the GPU's index, unconditionally, and calls
torch.cuda.synchronize() every step. On the CPU: the set_device and synchronize calls go, the
process group is gloo, the .cuda() moves go (the tensors stay where they are) and DDP gets no
device_ids. Nothing else changes (the CUDA GradScaler runs on CPU tensors as it is).
"""

MAIN = "main.py"


def apply(r):
    r.delete(MAIN, "torch.cuda.set_device(config.LOCAL_RANK)")
    r.replace(MAIN, "torch.distributed.init_process_group(backend='nccl', init_method='env://', "
                    "world_size=world_size, rank=rank)",
              "torch.distributed.init_process_group(backend='gloo', init_method='env://', "
              "world_size=world_size, rank=rank)  # gpu2tpu: CPU reference")
    r.delete(MAIN, "model.cuda()")
    r.replace(MAIN, ("model = torch.nn.parallel.DistributedDataParallel(model, "
                     "device_ids=[config.LOCAL_RANK], broadcast_buffers=False)"),
              "model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)")
    for line in ("samples = samples.cuda(non_blocking=True)", "targets = targets.cuda(non_blocking=True)",
                 "target = target.cuda(non_blocking=True)"):
        r.delete(MAIN, line)
    r.replace_each(MAIN, "images = images.cuda(non_blocking=True)", [], 2)  # validate, throughput
    r.replace_each(MAIN, "torch.cuda.synchronize()", "pass  # gpu2tpu: CPU reference", 3, which=[1])
