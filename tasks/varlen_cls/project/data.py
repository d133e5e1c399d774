"""Synthetic variable-length token sequences (8 to 64 tokens), labelled by a counting rule."""
import torch
from torch.utils.data import Dataset

DATA_SEED = 99
VOCAB = 50
MAX_LEN = 64


class CountingDataset(Dataset):
    """Label 1 when token 1 occurs more often than token 2 in the sequence."""

    def __init__(self, n=2048, train=True):
        g = torch.Generator().manual_seed(DATA_SEED if train else DATA_SEED + 1)
        lengths = torch.randint(8, MAX_LEN + 1, (n,), generator=g)
        self.seqs = [torch.randint(1, VOCAB, (int(n_tok),), generator=g) for n_tok in lengths]
        self.labels = [int((s == 1).sum() > (s == 2).sum()) for s in self.seqs]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, idx):
        return self.seqs[idx], self.labels[idx]
