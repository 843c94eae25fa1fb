#!/usr/bin/python3
"""Your own PyTorch model on pacer, in one command: a small convolutional
network pacer does not have, on Fashion-MNIST, its workers this script.

    pacer run --workers 2 --paradigm ssp:s=2 --train-n 60000 --out out/own -- python examples/own_model.py

pacer run starts the shards and two copies of this script; each learns
from its environment (PACER_COORDINATOR, PACER_WORKER_ID, PACER_WORKERS,
PACER_TOKEN) where the job is and which worker it is, as a DDP script
learns it from torchrun. Worker 0 writes the model's initial weights
(PACER_INIT_FILE: pacer.torch.Worker does it), which the shards start
from. The loop is an ordinary PyTorch one with w.step() where
optimizer.step() would be: the shards apply the job's optimizer (--lr,
--momentum) under its paradigm. The job ends after --epochs passes over
--train-n samples; the run then has OUT/summary.json and the final model,
OUT/model.npz, which this script's --evaluate loads back:

    python examples/own_model.py --evaluate out/own/model.npz
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import pacer.data
import pacer.torch


class SmallNet(nn.Module):
    """28x28x1 -> conv 8 -> pool -> conv 16 -> pool -> 64 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        acc = float((model(x).argmax(1) == y).float().mean())
    model.train()
    return acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train-limit", type=int, default=0, help="only the first N training samples (0: all 60,000)")
    ap.add_argument("--test-limit", type=int, default=2000, help="test samples of worker 0's evaluation at the end")
    ap.add_argument("--data-dir", default=None, help="Fashion-MNIST's IDX files (default $PACER_DATA, Debian's)")
    ap.add_argument("--seed", type=int, default=1, help="torch.manual_seed before the model is built: worker 0's initial weights")
    ap.add_argument("--evaluate", metavar="MODEL_NPZ", help="load a final model (pacer run's OUT/model.npz) and print its test accuracy")
    a = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    torch.set_num_threads(1)
    tx, ty = pacer.data.load("test", a.data_dir, limit=a.test_limit)
    tx, ty = torch.from_numpy(tx), torch.from_numpy(ty)
    torch.manual_seed(a.seed)
    model = SmallNet()
    if a.evaluate:
        pacer.torch.load_flat(a.evaluate, model)
        print(json.dumps({"event": "evaluate", "model": a.evaluate, "test_accuracy": accuracy(model, tx, ty)}))
        return

    # Joins the job (PACER_COORDINATOR, PACER_WORKER_ID) and pulls its
    # weights into the model; worker 0 first writes them (PACER_INIT_FILE).
    w = pacer.torch.Worker(model)
    x, y = pacer.data.load("train", a.data_dir, limit=a.train_limit)
    # This worker's part of the data: every K-th sample from its id on.
    k = w.job.workers
    x, y = torch.from_numpy(x[w.id::k]), torch.from_numpy(y[w.id::k])
    g = torch.Generator().manual_seed(a.seed * 1000 + w.id)
    t0, steps = time.monotonic(), 0
    while not w.done:
        for idx in torch.randperm(len(y), generator=g).split(w.job.batch):
            w.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            if not w.step(loss):  # False: the coordinator has ended the job
                break
            steps += 1
    print(json.dumps({"event": "done", "id": w.id, "steps": steps, "seconds": round(time.monotonic() - t0, 3),
                      "test_accuracy": accuracy(model, tx, ty)}))
    w.close()


if __name__ == "__main__":
    main()
