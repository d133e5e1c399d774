import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, features=32, hidden=128, classes=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)
