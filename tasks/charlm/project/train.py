"""Train a small character-level transformer LM (nanoGPT style) with gradient accumulation."""
import argparse
import math
import os
from contextlib import nullcontext

import torch

from data import load_splits
from model import CharTransformer

parser = argparse.ArgumentParser()
parser.add_argument("--max-iters", type=int, default=30)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--grad-accum", type=int, default=2)
parser.add_argument("--block-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--min-lr", type=float, default=3e-4)
parser.add_argument("--warmup-iters", type=int, default=5)
parser.add_argument("--weight-decay", type=float, default=0.1)
parser.add_argument("--eval-interval", type=int, default=10)
parser.add_argument("--eval-iters", type=int, default=4)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--out-dir", default="out")
args = parser.parse_args()

torch.manual_seed(args.seed)
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16) if device == "cuda" else nullcontext()

train_data, val_data, vocab_size = load_splits()


def get_batch(split):
    data = train_data if split == "train" else val_data
    ix = torch.randint(len(data) - args.block_size - 1, (args.batch_size,))
    x = torch.stack([data[i:i + args.block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + args.block_size] for i in ix])
    if device == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x, y


model = CharTransformer(vocab_size, block_size=args.block_size).to(device)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([
    {"params": decay, "weight_decay": args.weight_decay},
    {"params": no_decay, "weight_decay": 0.0},
], lr=args.lr, betas=(0.9, 0.95))


def get_lr(it):
    if it < args.warmup_iters:
        return args.lr * (it + 1) / args.warmup_iters
    ratio = (it - args.warmup_iters) / max(1, args.max_iters - args.warmup_iters)
    return args.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (args.lr - args.min_lr)


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = torch.zeros(args.eval_iters)
    for k in range(args.eval_iters):
        x, y = get_batch("val")
        with ctx:
            _, loss = model(x, y)
        losses[k] = loss.item()
    model.train()
    return losses.mean().item()


for it in range(args.max_iters):
    lr = get_lr(it)
    for group in optimizer.param_groups:
        group["lr"] = lr
    for micro in range(args.grad_accum):
        x, y = get_batch("train")
        with ctx:
            _, loss = model(x, y)
            loss = loss / args.grad_accum
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if (it + 1) % args.eval_interval == 0:
        print(f"iter {it + 1}: val loss {estimate_loss():.4f}")

os.makedirs(args.out_dir, exist_ok=True)
torch.save({"model": model.state_dict(), "vocab_size": vocab_size}, os.path.join(args.out_dir, "ckpt.pt"))
print("saved checkpoint")
