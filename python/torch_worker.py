#!/usr/bin/python3
"""A PyTorch worker for a live pacer job of pacer's mlp or cnn on
Fashion-MNIST (or MNIST): an ordinary torch training loop whose
optimizer.step() is pacer.torch.Worker.step().

    PACER_TOKEN=... PYTHONPATH=python /usr/bin/python3 python/torch_worker.py --coordinator HOST:PORT [--id N]

It learns the job (model, batch, workers, seed) from the coordinator, reads
its part of the training set (every K-th sample from its id on, shuffled per
epoch) and trains until the coordinator ends the job. It prints one JSON
line when done: its id, pushes, and seconds computing and held.
"""
import argparse
import faulthandler
import signal
import json
import logging
import time

import numpy as np
import torch
import torch.nn.functional as F

import pacer.data
import pacer.models
import pacer.torch


def unsupported(job):
    """Why this worker cannot train job as the Go worker would ("" if it
    can): the recipes it does not carry out yet."""
    if job.sampling != "shard":
        return "the job samples %s; this worker samples its own shard only (use Go workers)" % job.sampling
    if job.clip_norm > 0:
        return "the job clips gradients to norm %g; this worker does not clip yet (use Go workers)" % job.clip_norm
    if job.normalize != "none":
        return "the job normalizes the images (%s); this worker does not yet (use Go workers)" % job.normalize
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coordinator", required=True, help="shard 0's address, host:port")
    ap.add_argument("--id", type=int, default=-1, help="worker id (-1: the coordinator assigns one)")
    ap.add_argument("--data-dir", default=None, help="directory of the IDX files (default: $PACER_DATA, Debian's)")
    ap.add_argument("--tls-ca", default=None, help="CA bundle to verify the servers' certificates (turns TLS on)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: workers share the cores)")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a stack dump on demand, for a worker that hangs
    torch.set_num_threads(a.threads)

    x, y = pacer.data.load("train", a.data_dir)
    try:
        c = pacer.Client(a.coordinator, worker_id=a.id, tls_ca=a.tls_ca)
        model = pacer.models.for_job(c.job)
        w = pacer.torch.Worker(model, client=c)
    except pacer.JobDone:
        # The job ended before this worker joined it (the others did its
        # pushes): done, as a Go worker is.
        print(json.dumps({"id": a.id, "pushes": 0, "joined": False}))
        return
    job = w.job
    why = unsupported(job)
    if why:
        w.client.close()
        raise SystemExit("torch_worker: " + why)
    if job.train_limit:
        x, y = x[:job.train_limit], y[:job.train_limit]
    mine = np.arange(w.id % job.workers, len(y), job.workers)
    rng = np.random.default_rng(job.seed * 1000 + w.id)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    t0 = time.monotonic()
    epoch = 0
    while not w.done:
        order = mine[rng.permutation(len(mine))]
        for i in range(0, len(order) - job.batch + 1, job.batch):
            idx = torch.from_numpy(order[i:i + job.batch])
            w.zero_grad()
            F.cross_entropy(model(xt[idx]), yt[idx]).backward()
            if not w.step():
                break
        epoch += 1
    c = w.client
    print(json.dumps({"id": w.id, "model": job.model, "paradigm": job.kind, "pushes": c.pushes,
                      "dropped": c.dropped, "stale_pulls": c.stale_pulls, "busy_s": round(c.busy_s, 3), "wait_s": round(c.wait_s, 3),
                      "seconds": round(time.monotonic() - t0, 3)}))
    w.close()


if __name__ == "__main__":
    main()
