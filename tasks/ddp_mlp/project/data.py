"""Synthetic tabular classification data (a fixed random teacher network), from a fixed seed."""
import torch
from torch.utils.data import TensorDataset

DATA_SEED = 777


def make_dataset(n=4096, features=32, classes=8, train=True):
    g = torch.Generator().manual_seed(DATA_SEED)
    teacher = torch.randn(features, classes, generator=g)
    if not train:
        g = torch.Generator().manual_seed(DATA_SEED + 1)
    x = torch.randn(n, features, generator=g)
    y = (x @ teacher + 0.5 * torch.randn(n, classes, generator=g)).argmax(1)
    return TensorDataset(x, y)
