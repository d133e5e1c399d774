"""Train a small character-level GPT with tied embeddings and dropout (nanoGPT style), saving a
checkpoint at every evaluation and at the end."""
import argparse
import os

import torch

from data import load_splits
from model import GPT

parser = argparse.ArgumentParser()
parser.add_argument("--max-iters", type=int, default=45)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--block-size", type=int, default=32)
parser.add_argument("--dropout", type=float, default=0.1)
parser.add_argument("--lr", type=float, default=2e-3)
parser.add_argument("--weight-decay", type=float, default=0.1)
parser.add_argument("--grad-clip", type=float, default=1.0)
parser.add_argument("--eval-interval", type=int, default=10)
parser.add_argument("--eval-iters", type=int, default=4)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--out-dir", default="out")
args = parser.parse_args()

torch.manual_seed(args.seed)
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

train_data, val_data, vocab_size = load_splits()


def get_batch(split):
    data = train_data if split == "train" else val_data
    ix = torch.randint(len(data) - args.block_size, (args.batch_size,))
    x = torch.stack([data[i:i + args.block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + args.block_size] for i in ix])
    if device == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x, y


model = GPT(vocab_size, block_size=args.block_size, dropout=args.dropout).to(device)
decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([
    {"params": decay, "weight_decay": args.weight_decay},
    {"params": no_decay, "weight_decay": 0.0},
], lr=args.lr, betas=(0.9, 0.95))


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ("train", "val"):
        losses = torch.zeros(args.eval_iters)
        for k in range(args.eval_iters):
            x, y = get_batch(split)
            _, loss = model(x, y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


def save_checkpoint():
    os.makedirs(args.out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out_dir, "ckpt.pt"))


for it in range(args.max_iters):
    x, y = get_batch("train")
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if (it + 1) % args.eval_interval == 0:
        losses = estimate_loss()
        print(f"iter {it + 1}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        save_checkpoint()

save_checkpoint()
print("saved checkpoint")
