"""Classify variable-length token sequences; batches are padded to their longest sequence."""
import argparse
import os

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

from data import CountingDataset
from model import BagClassifier


def collate(batch):
    seqs, labels = zip(*batch)
    tokens = pad_sequence(seqs, batch_first=True, padding_value=0)  # pad to the batch's longest
    mask = (tokens != 0).float()
    return tokens, mask, torch.tensor(labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/model.pt")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(CountingDataset(), batch_size=args.batch_size, shuffle=True, drop_last=True,
                        collate_fn=collate, pin_memory=torch.cuda.is_available())
    model = BagClassifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    while step < args.steps:
        for tokens, mask, labels in loader:
            tokens, mask, labels = tokens.to(device), mask.to(device), labels.to(device)
            loss = criterion(model(tokens, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step >= args.steps:
                break
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    torch.save(model.state_dict(), args.out)
    print(f"saved {args.out} after {step} steps")


if __name__ == "__main__":
    main()
