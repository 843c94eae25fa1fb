#!/usr/bin/python3
"""A model pacer does not have, trained by PyTorch workers against pacer
server shards: a small ResNet on Fashion-MNIST.

pacer knows the network only as its N parameters (a job of --model
flat:n=N): the shards hold them, apply the job's optimizer under its
paradigm, checkpoint them and pacer export writes them back; the workers
compute the gradients, and evaluate the model, since shard 0 cannot.

    # everything on this machine: 1 shard, 2 workers, then the final model evaluated
    PYTHONPATH=python /usr/bin/python3 examples/resnet_fashion.py run --paradigm ssp:s=2 --out out/resnet

    # by hand, or across machines (docs/deploy.md): the initial weights first
    PYTHONPATH=python /usr/bin/python3 examples/resnet_fashion.py init --seed 1 --out init.npz   # prints N
    pacer server --index 0 --peers HOST:7070 --workers 2 --model flat:n=N --init init.npz ...
    PYTHONPATH=python /usr/bin/python3 examples/resnet_fashion.py worker --coordinator HOST:7070 --id 0
    PYTHONPATH=python /usr/bin/python3 examples/resnet_fashion.py worker --coordinator HOST:7070 --id 1

The workers carry out the job's recipes as python/torch_worker.py does,
with the same library functions: --train-limit and --normalize mean
(pacer.data.training_set; every evaluation's test samples are centred by
that training-set mean too, as shard 0 centres them for pacer's own
models), --sampling (pacer.data.batches: its part of the set or the whole
set, the last batch of an epoch short, as the Go worker's batcher cuts
it) and --clip-norm (pacer.torch.Worker.step). `run` takes the three
flags and passes them to the shards.

Each worker prints JSON lines: its evaluations ({"event": "eval", ...}: test
accuracy of the weights it holds, every --eval-every of its steps, and at
the end) and a last {"event": "done", ...} with its counts and the recipes
it carried out (sampling, own_shard: the share of its samples from its own
part, normalize, channel_mean, clip_norm, clipped). `run` gathers worker 0's into
OUT/curve.csv, exports the final model (OUT/model.npz), evaluates it and
writes OUT/result.json.

--norm batch builds the ResNet with BatchNorm instead of GroupNorm (the
same parameters, so the same N): its running statistics are buffers, not
parameters, and the workers average them with shard 0's help at every
pull (pacer.torch.Worker's buffers="average"); shard 0 writes their last
mean to OUT/buffers.json, which `run` loads beside the exported weights
(pacer.torch.load_buffers) for the final evaluation.

Under --ema D (run --ema, or shards started with it) the shards keep the
weights' moving average θ̄, and that is what the job evaluates, as shard 0
does for pacer's own models: the workers' evaluations during the job are of
θ̄ (pulled from the shards and swapped into the model for the evaluation,
pacer.torch.Worker.averaged), each eval line says which ("evaluated":
"average" or "weights"), and `run` exports θ̄ as the final model
(pacer export --average), reporting θ's accuracy beside it. A worker's last
evaluation, after the job has ended, is of the weights it holds: the shards
no longer answer, so `run` leaves it out of an --ema curve.
"""
import argparse
import csv
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# pip install ./python's package, else the repository's copy beside this
# example (PYTHONPATH=python, or found here).
try:
    import pacer
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pacer
FROM_SOURCE = os.path.abspath(pacer.__file__).startswith(os.path.join(ROOT, "python") + os.sep)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import pacer.data  # noqa: E402
import pacer.torch  # noqa: E402
import pacer.wire  # noqa: E402


NORMS = ("group", "batch")


def norm_layer(kind, c):
    """GroupNorm of 4 groups, or BatchNorm, whose running statistics are
    buffers: the workers average them at each pull (pacer.torch.Worker's
    buffers="average") and shard 0 writes their last mean beside the
    model (buffers.json)."""
    if kind == "group":
        return nn.GroupNorm(4, c)
    if kind == "batch":
        return nn.BatchNorm2d(c)
    raise ValueError("--norm %s: want one of %s" % (kind, ", ".join(NORMS)))


class Block(nn.Module):
    """A basic residual block: two 3x3 convolutions, each normalized, and a
    1x1 projection on the shortcut when the shape changes."""

    def __init__(self, cin, cout, stride, norm="group"):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.norm1 = norm_layer(norm, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.norm2 = norm_layer(norm, cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), norm_layer(norm, cout))

    def forward(self, x):
        y = F.relu(self.norm1(self.conv1(x)))
        y = self.norm2(self.conv2(y))
        return F.relu(y + (x if self.short is None else self.short(x)))


class ResNet(nn.Module):
    """28x28x1 -> 3x3 conv 16 -> blocks 16, 32 (/2), 64 (/2) -> global
    average pool -> 10 classes. norm "group" (GroupNorm, the default) keeps
    no running statistics, so the parameters the shards hold are the whole
    model; "batch" (BatchNorm) has the same parameters and buffers besides,
    which the workers average (docs/python.md, "Buffers")."""

    def __init__(self, width=16, norm="group"):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, 1, 1, bias=False)
        self.norm = norm_layer(norm, width)
        self.blocks = nn.Sequential(Block(width, width, 1, norm), Block(width, 2 * width, 2, norm),
                                    Block(2 * width, 4 * width, 2, norm))
        self.fc = nn.Linear(4 * width, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.relu(self.norm(self.stem(x)))
        x = self.blocks(x)
        return self.fc(x.mean((2, 3)))


def build(seed, norm="group"):
    """The model with its own PyTorch initialization, seeded: the same seed
    gives the same initial weights (the job's --init)."""
    torch.manual_seed(seed)
    return ResNet(norm=norm)


def evaluate(model, x, y, batch=500, autocast=None):
    """Test accuracy of the model on x, y, on the model's device, in its
    parameters' dtype (under autocast in that dtype, if given)."""
    p = next(model.parameters())
    model.eval()
    correct = 0
    with torch.no_grad(), pacer.torch.autocast_context(p.device, autocast):
        for i in range(0, len(y), batch):
            out = model(x[i:i + batch].to(p.device, p.dtype))
            correct += int((out.argmax(1).cpu() == y[i:i + batch]).sum())
    model.train()
    return correct / max(len(y), 1)


def emit(**kv):
    print(json.dumps(kv), flush=True)


def cmd_init(a):
    model = build(a.seed, a.norm)
    n = pacer.torch.save_flat(model, a.out)
    emit(event="init", params=n, model="flat:n=%d" % n, init=a.out, seed=a.seed)


def probe(a):
    """The device and precisions a's flags name, tried on this ResNet
    (pacer.torch.precision): what the device cannot train the model in
    exits naming the flag, before anything starts."""
    try:
        return pacer.torch.precision(a.device, a.dtype, a.autocast, model=ResNet(norm=a.norm), sample=torch.zeros(2, 784))
    except ValueError as e:
        sys.exit("resnet_fashion: %s" % e)


def cmd_worker(a):
    torch.set_num_threads(a.threads)
    dev, pdt, adt = probe(a)
    x, y = pacer.data.load("train", a.data_dir)
    tx, ty = pacer.data.load("test", a.data_dir, limit=a.test_limit)
    tx, ty = torch.from_numpy(tx), torch.from_numpy(ty)
    model = ResNet(norm=a.norm)  # its weights come from the shards (the job's --init)
    want = "flat:n=%d" % pacer.torch.num_params(model)
    emit(event="joining", id=a.id, coordinator=a.coordinator)
    try:
        c = pacer.Client(a.coordinator, worker_id=a.id, tls_ca=a.tls_ca)
    except pacer.JobDone:
        emit(event="done", id=a.id, pushes=0, joined=False)
        return
    if c.job.model != want:
        c.close()
        sys.exit("resnet_fashion: the job's model is %s; this ResNet is %s (start the shards with --model %s "
                 "and the init subcommand's file)" % (c.job.model, want, want))
    model.to(dev, pdt)  # before the Worker: it copies to and from where the parameters are
    w = pacer.torch.Worker(model, client=c, scaler=pacer.torch.grad_scaler(dev, adt))
    job = w.job
    # The job's recipes as every worker carries them out (python/torch_worker.py
    # too): --train-limit and --normalize mean here (the test samples are
    # centred by the training set's mean, as shard 0 centres them),
    # --sampling in the batches below, --clip-norm in w.step.
    try:
        x, y, mean = pacer.data.training_set(job, x, y)
    except ValueError as e:
        w.close()
        sys.exit("resnet_fashion: %s" % e)
    if mean is not None:
        tx = torch.from_numpy(pacer.data.subtract_mean(tx.numpy(), mean))
    xt, yt = torch.from_numpy(x).to(dev, pdt), torch.from_numpy(y).to(dev)
    t0 = time.monotonic()
    steps = 0
    evals = a.eval_every > 0 and (a.eval_worker < 0 or a.eval_worker == w.id)
    if job.ema > 0:
        emit(event="evaluates", id=w.id, weights="average", ema=job.ema,
             note="the job has --ema: evaluations during the job are of the shards' moving average of the weights")

    def measure():
        """The test accuracy of what the job evaluates: θ̄ under --ema, the
        weights otherwise; None if the job ended before θ̄ came."""
        if job.ema <= 0:
            return evaluate(model, tx, ty, autocast=adt), "weights"
        try:
            with w.averaged():
                return evaluate(model, tx, ty, autocast=adt), "average"
        except pacer.JobDone:
            return None, None
    share = pacer.data.OwnShare(job, w.id)
    for _, idx in pacer.data.batches(job, w.id, len(y)):
        if w.done:
            break
        share.add(idx)
        idx = torch.from_numpy(idx).to(dev)
        w.zero_grad()
        with pacer.torch.autocast_context(dev, adt):
            out = model(xt[idx])
        w.scaler.scale(F.cross_entropy(out.float(), yt[idx])).backward()
        if not w.step():  # the shards apply the optimizer; False: the job has ended
            break
        steps += 1
        if evals and steps % a.eval_every == 0:
            acc, what = measure()
            if acc is not None:
                emit(event="eval", id=w.id, step=steps, seconds=round(time.monotonic() - t0, 3),
                     test_accuracy=acc, evaluated=what)
    # The weights it last pulled (the job has ended: no θ̄ from the shards
    # now); the job's final ones are in the shards' checkpoints (pacer
    # export, --average for θ̄).
    emit(event="eval", id=w.id, step=steps, seconds=round(time.monotonic() - t0, 3), test_accuracy=evaluate(model, tx, ty, autocast=adt),
         evaluated="weights", last=True)
    cl = w.client
    emit(event="done", id=w.id, pushes=cl.pushes, dropped=cl.dropped, busy_s=round(cl.busy_s, 3),
         wait_s=round(cl.wait_s, 3), seconds=round(time.monotonic() - t0, 3), sampling=job.sampling,
         own_shard=share.share, normalize=job.normalize, channel_mean=mean,
         clip_norm=job.clip_norm, clipped=w.clipped, device=str(dev), dtype=a.dtype, autocast=a.autocast,
         in_place=w.in_place, skipped=w.skipped, norm=a.norm, buffer_workers=w.buffer_workers)
    w.close()


def free_addrs(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    addrs = ["127.0.0.1:%d" % s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return addrs


def pacer_bin(given):
    for p in (given, os.environ.get("PACER_BIN"), os.path.join(ROOT, "pacer"), shutil.which("pacer")):
        if p and os.access(p, os.X_OK):
            return p
    sys.exit("resnet_fashion: no pacer binary (give --pacer, $PACER_BIN, or build ./pacer: go build -o pacer ./cmd/pacer)")


def workers_mean(lines, normalize):
    """The training-set mean (None without --normalize mean) that the
    workers which pushed report in their done lines; lines holds each
    worker's JSON lines by its log's name. ValueError when no worker
    pushed (naming what each said: a done line of 0 pushes, or none,
    the mark of a worker that died), when they report different means, or
    when the mean does not match normalize."""
    done = {k: [e for e in lines[k] if e["event"] == "done"] for k in sorted(lines)}
    if not any(e.get("pushes") for es in done.values() for e in es):
        def said(es):
            if not es:
                return "no done line"
            if es[-1].get("joined") is False:
                return "0 pushes: the job had ended when it joined"
            return "0 pushes"
        raise ValueError("no worker pushed a gradient (%s)" % "; ".join("%s: %s" % (k, said(es)) for k, es in done.items()))
    means = {json.dumps(e.get("channel_mean")) for es in done.values() for e in es if e.get("pushes")}
    if len(means) != 1:
        raise ValueError("the workers report %d training-set means (%s): want one" % (len(means), sorted(means)))
    mean = json.loads(means.pop())
    if (mean is not None) != (normalize == "mean"):
        raise ValueError("--normalize %s, but the workers report the mean %s" % (normalize, mean))
    return mean


def job_progress(out, procs):
    """What the job's processes have said so far: which still run, and
    worker 0's last evaluation (its log's last eval line)."""
    running = [p.name for p in procs if p.poll() is None]
    last = None
    try:
        with open(os.path.join(out, "worker-0.log"), errors="replace") as f:
            for s in f:
                if s.startswith('{"event": "eval"'):
                    last = json.loads(s)
    except (OSError, ValueError):
        pass
    said = "worker 0 at step %d, test accuracy %.4f" % (last["step"], last["test_accuracy"]) if last else \
        "no evaluation from worker 0 yet"
    return "%s; running: %s" % (said, ", ".join(running) or "none")


def cmd_run(a):
    """Shards and workers on this machine, every process stopped by the
    end (or by --timeout), then the final model exported and evaluated."""
    pbin = pacer_bin(a.pacer)
    probe(a)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    init = os.path.join(out, "init.npz")
    n = pacer.torch.save_flat(build(a.seed, a.norm), init)
    addrs = free_addrs(a.shards)
    tok, ctl = secrets.token_hex(16), secrets.token_hex(16)
    env = dict(os.environ, PACER_TOKEN=tok)
    if FROM_SOURCE:
        env["PYTHONPATH"] = os.path.join(ROOT, "python")  # the workers import the copy this process does
    env.pop("PACER_CONTROL_TOKEN", None)
    job = ["--workers", str(a.workers), "--shards", str(a.shards), "--paradigm", a.paradigm, "--model", "flat:n=%d" % n,
           "--init", init, "--seed", str(a.seed), "--epochs", str(a.epochs), "--batch", str(a.batch), "--lr", str(a.lr),
           "--momentum", str(a.momentum), "--train-limit", str(a.train_limit), "--ema", str(a.ema),
           "--sampling", a.sampling, "--normalize", a.normalize, "--clip-norm", str(a.clip_norm)]
    if a.data_dir:
        job += ["--data-dir", a.data_dir]
    procs = []

    def start(name, args, penv):
        log = open(os.path.join(out, name + ".log"), "wb")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=penv)
        log.close()
        p.name = name
        procs.append(p)
        return p

    def tail(p):
        with open(os.path.join(out, p.name + ".log"), errors="replace") as f:
            return f.read()[-2000:]

    t0 = time.monotonic()
    deadline = t0 + a.timeout
    ckpt = os.path.join(out, "ckpt")
    shutil.rmtree(ckpt, ignore_errors=True)
    try:
        for i, addr in enumerate(addrs):
            start("shard-%d" % i, [pbin, "server", "--index", str(i), "--peers", ",".join(addrs), "--listen", addr,
                                   "--checkpoint-dir", ckpt, "--out", out] + job, dict(env, PACER_CONTROL_TOKEN=ctl))
        for addr, p in zip(addrs, list(procs)):
            host, port = addr.rsplit(":", 1)
            while True:
                try:
                    socket.create_connection((host, int(port)), timeout=1).close()
                    break
                except OSError:
                    if p.poll() is not None:
                        sys.exit("resnet_fashion: %s exited %s:\n%s" % (p.name, p.returncode, tail(p)))
                    if time.monotonic() > deadline:
                        sys.exit("resnet_fashion: %s does not listen on %s" % (p.name, addr))
                    time.sleep(0.05)
        wargs = ["--coordinator", addrs[0], "--eval-every", str(a.eval_every), "--test-limit", str(a.test_limit),
                 "--eval-worker", "0", "--device", a.device, "--dtype", a.dtype, "--autocast", a.autocast,
                 "--norm", a.norm] + \
            (["--data-dir", a.data_dir] if a.data_dir else [])
        for k in range(a.workers):
            start("worker-%d" % k, [sys.executable, os.path.abspath(__file__), "worker", "--id", str(k)] + wargs, env)
        print("resnet_fashion: %d shard(s) and %d workers started (logs in %s); waiting for the job's end, at most "
              "--timeout %g s" % (a.shards, a.workers, out, a.timeout))
        progress = pacer.wire.WaitNotice(lambda: "resnet_fashion: waiting for the job: %s" % job_progress(out, procs),
                                         time.monotonic(), say=print)
        for p in procs:
            while True:
                try:
                    p.wait(timeout=min(1.0, max(0.1, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() >= deadline:
                        sys.exit("resnet_fashion: %s still running after --timeout %g s:\n%s"
                                 % (p.name, a.timeout, tail(p)))
                    progress.tick(time.monotonic())
        for p in procs:
            if p.returncode != 0:
                sys.exit("resnet_fashion: %s exited %s:\n%s" % (p.name, p.returncode, tail(p)))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    seconds = time.monotonic() - t0

    lines = {}
    for p in procs[a.shards:]:
        with open(os.path.join(out, p.name + ".log")) as f:
            lines[p.name] = [json.loads(s) for s in f if s.startswith("{")]
    evaluated = "average" if a.ema > 0 else "weights"
    curve = [e for e in lines["worker-0"] if e["event"] == "eval" and e["evaluated"] == evaluated]
    with open(os.path.join(out, "curve.csv"), "w", newline="") as f:
        cw = csv.writer(f)
        cw.writerow(["seconds", "worker", "step", "test_accuracy", "evaluated"])
        for e in curve:
            cw.writerow([e["seconds"], e["id"], e["step"], e["test_accuracy"], e["evaluated"]])

    done = [e for k in sorted(lines) for e in lines[k] if e["event"] == "done"]
    # The final model, as the shards checkpointed it at the job's end: θ̄
    # under --ema (what the job evaluates), the weights otherwise; under
    # --normalize mean on test samples centred by the mean the workers
    # trained with (every worker's the same bits).
    try:
        mean = workers_mean(lines, a.normalize)
    except ValueError as e:
        sys.exit("resnet_fashion: %s\n%s" % (e, "\n".join("== %s\n%s" % (p.name, tail(p)) for p in procs[a.shards:])))
    tx, ty = pacer.data.load("test", a.data_dir, limit=a.final_test_limit)
    if mean is not None:
        tx = pacer.data.subtract_mean(tx, mean)
    tx, ty = torch.from_numpy(tx), torch.from_numpy(ty)

    def export(npz, average):
        r = subprocess.run([pbin, "export", "--checkpoint-dir", ckpt, "--model-file", npz] + (["--average"] if average else []),
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            sys.exit("resnet_fashion: pacer export: " + r.stderr)
        model = ResNet(norm=a.norm)
        pacer.torch.load_flat(npz, model)
        if a.norm == "batch":
            # The workers' mean BatchNorm statistics at the job's end, which
            # shard 0 wrote beside its summary.
            pacer.torch.load_buffers(os.path.join(out, "buffers.json"), model)
        return evaluate(model, tx, ty)

    npz = os.path.join(out, "model.npz")
    final = export(npz, a.ema > 0)
    weights_final = export(os.path.join(out, "weights.npz"), False) if a.ema > 0 else final
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    result = {"model": "flat:n=%d" % n, "architecture": "ResNet (examples/resnet_fashion.py)", "norm": a.norm,
              "seed": a.seed, "epochs": a.epochs, "paradigm": a.paradigm,
              "workers": a.workers, "shards": a.shards, "pushes": summary["pushes"], "updates": summary["updates"],
              "seconds": round(seconds, 3), "ema": a.ema, "evaluated": evaluated, "final_accuracy": final,
              "final_test_samples": len(ty),
              "curve": [[e["seconds"], e["test_accuracy"]] for e in curve], "workers_done": done,
              "no_accuracy": summary.get("no_accuracy"), "sampling": a.sampling, "normalize": a.normalize,
              "channel_mean": mean, "clip_norm": a.clip_norm, "device": a.device, "dtype": a.dtype,
              "autocast": a.autocast}
    if a.ema > 0:
        result["final_weights_accuracy"] = weights_final  # θ's, beside θ̄'s final_accuracy
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    what = "θ̄, the weights' moving average (--ema %g)" % a.ema if a.ema > 0 else "the weights"
    for e in curve:
        print("worker 0, step %d, %.1f s: test accuracy %.4f of %s" % (e["step"], e["seconds"], e["test_accuracy"], what))
    if a.ema > 0:
        print("%s, %d workers, %d shard(s): %d pushes in %.1f s; final model θ̄ (pacer export --average, %s): test accuracy "
              "%.4f on %d samples; the final weights θ: %.4f"
              % (a.paradigm, a.workers, a.shards, summary["pushes"], seconds, npz, final, len(ty), weights_final))
    else:
        print("%s, %d workers, %d shard(s), %snorm: %d pushes in %.1f s; final model (pacer export, %s): test accuracy "
              "%.4f on %d samples" % (a.paradigm, a.workers, a.shards, a.norm, summary["pushes"], seconds, npz, final, len(ty)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("init", help="write the model's initial weights (pacer server --init); prints N")
    p.add_argument("--seed", type=int, default=1, help="torch.manual_seed before the model's own initialization")
    p.add_argument("--out", default="init.npz")
    p.add_argument("--norm", default="group", choices=NORMS, help="the ResNet's normalization: GroupNorm or BatchNorm")
    p.set_defaults(run=cmd_init)

    p = sub.add_parser("worker", help="one PyTorch worker of a running job")
    p.add_argument("--coordinator", required=True, help="shard 0's address, host:port ($PACER_TOKEN: the job token)")
    p.add_argument("--id", type=int, default=-1, help="worker id (-1: the coordinator assigns one)")
    p.add_argument("--eval-every", type=int, default=50, help="evaluate every N own steps (0: only at the end)")
    p.add_argument("--eval-worker", type=int, default=-1, help="only this worker evaluates during the job (-1: every one)")
    p.add_argument("--test-limit", type=int, default=2000, help="test samples each evaluation uses (0: all 10,000)")
    p.add_argument("--data-dir", default=None, help="Fashion-MNIST's IDX files (default $PACER_DATA, Debian's)")
    p.add_argument("--tls-ca", default=None, help="CA bundle of the servers' certificates (turns TLS on)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--device", default="cpu", help="the workers' device: cpu, cuda, cuda:N (default cpu)")
    p.add_argument("--dtype", default="float32", choices=sorted(pacer.torch.DTYPES),
                   help="the workers' parameters' dtype (the shards hold float32)")
    p.add_argument("--autocast", default="none", choices=["none", "bfloat16", "float16"],
                   help="the workers' forward passes under torch.autocast in this dtype (float16: with a GradScaler)")
    p.add_argument("--norm", default="group", choices=NORMS,
                   help="the ResNet's normalization: GroupNorm, or BatchNorm (its statistics averaged across the workers)")
    p.set_defaults(run=cmd_worker)

    p = sub.add_parser("run", help="shards, workers, export and evaluation, all on this machine")
    p.add_argument("--paradigm", default="bsp", help="any paradigm the live server runs: bsp, asp, ssp:s=3, dssp:sl=3,su=15, ...")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ema", type=float, default=0.0,
                   help="keep and evaluate the weights' moving average with this decay, e.g. 0.99 (0: the weights)")
    p.add_argument("--train-limit", type=int, default=0, help="only the first N training samples (0: all 60,000)")
    p.add_argument("--sampling", default="shard", choices=["shard", "global"],
                   help="where a worker's batches come from: its part of the set, or the whole set")
    p.add_argument("--normalize", default="none", choices=["none", "mean"],
                   help="mean: subtract the training set's mean (training and test samples)")
    p.add_argument("--clip-norm", type=float, default=0.0, help="scale each gradient to at most this 2-norm (0: no clip)")
    p.add_argument("--test-limit", type=int, default=2000, help="test samples of worker 0's evaluations")
    p.add_argument("--final-test-limit", type=int, default=0, help="test samples of the final model's evaluation (0: all)")
    p.add_argument("--eval-every", type=int, default=100, help="worker 0 evaluates every N of its steps (0: only at the end)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--pacer", default=None, help="the pacer binary (default $PACER_BIN, ./pacer, then PATH)")
    p.add_argument("--timeout", type=float, default=3600, help="stop everything after this many seconds")
    p.add_argument("--out", default="out/resnet")
    p.add_argument("--device", default="cpu", help="the workers' device: cpu, cuda, cuda:N (default cpu)")
    p.add_argument("--dtype", default="float32", choices=sorted(pacer.torch.DTYPES),
                   help="the workers' parameters' dtype (the shards hold float32)")
    p.add_argument("--autocast", default="none", choices=["none", "bfloat16", "float16"],
                   help="the workers' forward passes under torch.autocast in this dtype (float16: with a GradScaler)")
    p.add_argument("--norm", default="group", choices=NORMS,
                   help="the ResNet's normalization: GroupNorm, or BatchNorm (its statistics averaged across the workers)")
    p.set_defaults(run=cmd_run)
    a = ap.parse_args()
    # Lines reach a pipe or a file as they are printed, not at exit.
    sys.stdout.reconfigure(line_buffering=True)
    a.run(a)


if __name__ == "__main__":
    main()
