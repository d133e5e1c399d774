"""Synthetic CIFAR-like data: 10 classes of 3x16x16 images, generated from a fixed seed."""
import torch
from torch.utils.data import Dataset

DATA_SEED = 1234


class SyntheticCIFAR(Dataset):
    def __init__(self, n=2048, train=True, image_size=16, num_classes=10):
        g = torch.Generator().manual_seed(DATA_SEED)
        prototypes = torch.randn(num_classes, 3, image_size, image_size, generator=g)
        if not train:
            g = torch.Generator().manual_seed(DATA_SEED + 1)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)
        noise = torch.randn(n, 3, image_size, image_size, generator=g)
        self.images = 0.6 * prototypes[self.labels] + noise

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]
