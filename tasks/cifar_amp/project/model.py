import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.stem = ConvBlock(3, width)
        self.block1 = ConvBlock(width, width)
        self.down = ConvBlock(width, 2 * width)
        self.block2 = ConvBlock(2 * width, 2 * width)
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.block1(x)
        x = F.max_pool2d(self.down(x), 2)
        x = x + self.block2(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)
