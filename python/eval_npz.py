#!/usr/bin/python3
"""Evaluate a model pacer exported (pacer export) with PyTorch alone.

Builds the architecture in torch (mlp, cnn, alexnet-small or cifar-net on
28x28 images, recognised from the file's arrays), loads the .npz as its state_dict unchanged (docs/model-format.md:
the arrays are in PyTorch's own names, shapes and element orders) and
prints its test accuracy on Fashion-MNIST (or MNIST) read from the IDX
files, pixels/255 as float32, exactly as pacer reads them.

    /usr/bin/python3 python/eval_npz.py model.npz [--data-dir DIR] [--test-limit N] [--json]

Needs Debian's python3-torch and python3-numpy (scripts/setup installs
them); run it as /usr/bin/python3, whose packages those are.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """784 -> 256 -> ReLU -> 128 -> ReLU -> 10 (pacer's mlp)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):  # x: (N, 784)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CNN(nn.Module):
    """conv5x5 32 -> ReLU -> pool2 -> conv5x5 64 -> ReLU -> pool2 -> 1024 -> 128 -> 10 (pacer's cnn)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5)
        self.conv2 = nn.Conv2d(32, 64, 5)
        self.fc1 = nn.Linear(64 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):  # x: (N, 784)
        x = x.view(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)  # NCHW order: channel, row, column
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class AlexNetSmall(nn.Module):
    """pacer's alexnet-small on 1x28x28 (docs/models.md): conv5x5 32 pad 2, conv5x5 64 pad 2,
    conv3x3 128 pad 1 (each -> ReLU -> pool2) -> 1152 -> 384 -> 192 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.fc1 = nn.Linear(128 * 3 * 3, 384)
        self.fc2 = nn.Linear(384, 192)
        self.fc3 = nn.Linear(192, 10)

    def forward(self, x):  # x: (N, 784)
        x = x.view(-1, 1, 28, 28)
        for conv in (self.conv1, self.conv2, self.conv3):
            x = F.max_pool2d(F.relu(conv(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CifarNet(nn.Module):
    """pacer's cifar-net on 1x28x28 (docs/models.md): conv5x5 32, 32, 64, each pad 2 ->
    ReLU -> pool2, then 576 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 32, 5, padding=2)
        self.conv3 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 3 * 3, 10)

    def forward(self, x):  # x: (N, 784)
        x = x.view(-1, 1, 28, 28)
        for conv in (self.conv1, self.conv2, self.conv3):
            x = F.max_pool2d(F.relu(conv(x)), 2)
        return self.fc1(torch.flatten(x, 1))


MODELS = {"mlp": MLP, "cnn": CNN, "alexnet-small": AlexNetSmall, "cifar-net": CifarNet}


def load_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = int.from_bytes(data[0:4], "big") & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_test(data_dir, limit):
    x = load_idx(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz"))
    y = load_idx(os.path.join(data_dir, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    x = x.reshape(x.shape[0], -1).astype(np.float32) / np.float32(255)
    if limit > 0:
        x, y = x[:limit], y[:limit]
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_file")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--test-limit", type=int, default=0, help="only the first N test samples (0: all)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    with np.load(a.model_file) as z:
        state = {k: torch.from_numpy(z[k]) for k in z.files}
    for name, cls in MODELS.items():
        model = cls()
        want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        if want == {k: tuple(v.shape) for k, v in state.items()}:
            break
    else:
        sys.exit("eval_npz: %s holds %s, the layout of no model (%s)"
                 % (a.model_file, sorted((k, tuple(v.shape)) for k, v in state.items()), ", ".join(MODELS)))
    model.load_state_dict(state, strict=True)
    model.eval()

    x, y = load_test(a.data_dir, a.test_limit)
    correct = 0
    with torch.no_grad():
        for i in range(0, len(y), 1000):
            correct += int((model(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum())
    n = len(y)
    if a.json:
        print(json.dumps({"model": name, "correct": correct, "n": n, "accuracy": correct / n}))
    else:
        print("test accuracy %.4f (%d of %d samples), model %s from %s (PyTorch %s)"
              % (correct / n, correct, n, name, a.model_file, torch.__version__))


if __name__ == "__main__":
    main()
