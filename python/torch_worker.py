#!/usr/bin/python3
"""A PyTorch worker for a live pacer job of pacer's mlp or cnn on
Fashion-MNIST (or MNIST): an ordinary torch training loop whose
optimizer.step() is pacer.torch.Worker.step().

    PACER_TOKEN=... PYTHONPATH=python /usr/bin/python3 python/torch_worker.py --coordinator HOST:PORT [--id N]

It learns the job (model, batch, workers, seed, recipes) from the
coordinator, reads the training set, draws its mini-batches from its part
of it (every K-th sample from its id on, shuffled per epoch; with --sampling
global, the whole set) and trains until the coordinator ends the job. It
carries out the job's recipes as a Go worker does: --normalize mean
(pacer.data.training_set), --sampling global (pacer.data.batches) and
--clip-norm (in pacer.torch.Worker.step); its batches are those a Go
worker of the same job and id draws, bit for bit (pacer.batches). It
prints one JSON line when done: its id, pushes, seconds computing and
held, the recipes it carried out and its first batch's sample indices
(first_batch).

--device (cpu, cuda, cuda:1, ...) puts the model on that device, --dtype
makes its parameters float32, bfloat16 or float16 (the shards hold float32:
pacer.torch.Worker copies between them) and --autocast runs the forward
pass under torch.autocast in bfloat16 or float16, with a GradScaler for
float16 (it scales only on CUDA). A device that cannot compute the
precision asked for (float16 on a CPU whose PyTorch lacks half-precision
matrix products) is refused before the worker joins, naming the flag.
"""
import argparse
import faulthandler
import signal
import json
import logging
import sys
import time

import torch
import torch.nn.functional as F

import pacer.data
import pacer.models
import pacer.torch


def unsupported(job):
    """Why this worker cannot train job as the Go worker would ("" if it
    can)."""
    if job.dataset not in pacer.data.CHANNELS:
        return "the job trains on %s; this worker reads the IDX sets (%s) only (use Go workers)" % (
            job.dataset, ", ".join(sorted(pacer.data.CHANNELS)))
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coordinator", required=True, help="shard 0's address, host:port")
    ap.add_argument("--id", type=int, default=-1, help="worker id (-1: the coordinator assigns one)")
    ap.add_argument("--data-dir", default=None, help="directory of the IDX files (default: $PACER_DATA, Debian's)")
    ap.add_argument("--tls-ca", default=None, help="CA bundle to verify the servers' certificates (turns TLS on)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: workers share the cores)")
    ap.add_argument("--device", default="cpu", help="the model's device: cpu, cuda, cuda:N (default cpu)")
    ap.add_argument("--dtype", default="float32", choices=sorted(pacer.torch.DTYPES),
                    help="the parameters' dtype (default float32)")
    ap.add_argument("--autocast", default="none", choices=["none", "bfloat16", "float16"],
                    help="run the forward pass under torch.autocast in this dtype (default none)")
    a = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # the JSON line reaches a pipe when printed
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a stack dump on demand, for a worker that hangs
    torch.set_num_threads(a.threads)
    try:
        dev, pdt, adt = pacer.torch.precision(a.device, a.dtype, a.autocast)
    except ValueError as e:
        sys.exit("torch_worker: %s" % e)

    x, y = pacer.data.load("train", a.data_dir)
    try:
        c = pacer.Client(a.coordinator, worker_id=a.id, tls_ca=a.tls_ca)
        model = pacer.models.for_job(c.job).to(device=dev, dtype=pdt)
        scaler = pacer.torch.grad_scaler(dev, adt)
        w = pacer.torch.Worker(model, client=c, scaler=scaler)
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
    x, y, mean = pacer.data.training_set(job, x, y)
    xt, yt = torch.from_numpy(x).to(dev, pdt), torch.from_numpy(y).to(dev)
    share = pacer.data.OwnShare(job, w.id)
    first = None
    t0 = time.monotonic()
    for _, idx in pacer.data.batches(job, w.id, len(y)):
        if w.done:
            break
        if first is None:
            first = idx.tolist()
        share.add(idx)
        idx = torch.from_numpy(idx).to(dev)
        w.zero_grad()
        with pacer.torch.autocast_context(dev, adt):
            out = model(xt[idx])
        # The loss in float32 whatever the forward pass computed in.
        loss = F.cross_entropy(out.float(), yt[idx])
        scaler.scale(loss).backward()
        if not w.step(loss):
            break
    c = w.client
    print(json.dumps({"id": w.id, "model": job.model, "paradigm": job.kind, "pushes": c.pushes,
                      "dropped": c.dropped, "stale_pulls": c.stale_pulls, "busy_s": round(c.busy_s, 3), "wait_s": round(c.wait_s, 3),
                      "seconds": round(time.monotonic() - t0, 3), "sampling": job.sampling,
                      "own_shard": share.share, "clip_norm": job.clip_norm, "clipped": w.clipped,
                      "normalize": job.normalize, "channel_mean": mean, "first_batch": first,
                      "device": str(dev), "dtype": a.dtype, "autocast": a.autocast, "in_place": w.in_place,
                      "skipped": w.skipped}))
    w.close()


if __name__ == "__main__":
    main()
