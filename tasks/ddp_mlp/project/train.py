"""Data-parallel MLP training, written for several GPUs: torchrun --nproc_per_node=4 train.py

Runs single-process when not launched by torchrun. The global batch is split across ranks.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data import make_dataset
from model import MLP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/mlp.pt")
    args = p.parse_args()

    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
    else:
        rank, world, local_rank = 0, 1, 0
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    torch.manual_seed(args.seed)

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=args.seed) \
        if distributed else None
    loader = DataLoader(dataset, batch_size=args.global_batch // world, sampler=sampler,
                        shuffle=sampler is None, drop_last=True, pin_memory=True)
    model = MLP().to(device)
    if distributed:
        model = DDP(model, device_ids=[local_rank] if torch.cuda.is_available() else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    while step < args.steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step >= args.steps:
                break

    if rank == 0:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        state = model.module.state_dict() if distributed else model.state_dict()
        torch.save(state, args.out)
        print(f"saved {args.out} after {step} steps, final loss {loss.item():.4f}")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
