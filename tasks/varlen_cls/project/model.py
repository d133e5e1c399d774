import torch
import torch.nn as nn


class BagClassifier(nn.Module):
    """Token embeddings, masked mean over the sequence, then an MLP."""

    def __init__(self, vocab=50, dim=32, hidden=64, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, tokens, mask):
        emb = self.embed(tokens) * mask.unsqueeze(-1)
        pooled = emb.sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return self.mlp(pooled)
