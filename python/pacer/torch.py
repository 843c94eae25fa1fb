"""PyTorch workers for pacer: any training loop's model, its parameters in
one flat float32 vector the shards hold.

    model = MyNet()
    w = pacer.torch.Worker(model, coordinator="10.0.0.1:7070")   # $PACER_TOKEN
    while not w.done:
        for x, y in loader:
            w.zero_grad()
            F.cross_entropy(model(x), y).backward()
            if not w.step():      # instead of optimizer.step(): the shards apply the optimizer
                break

The flat vector is the model's parameters in model.parameters() order, each
tensor row-major (C order) in its own shape, unless the model names pacer's
layout (pacer_layout = "pacer", as pacer.torch.models' MLP and CNN do): then
each weight is stored as pacer's Go models store it (nn/layout.go), so a
PyTorch worker trains the same job a Go worker does. Each parameter's data
and .grad are views into the flat vectors, so backward() writes the
gradient in place and a pull lands in the model without a copy, when every
parameter is float32 on the CPU. Parameters on another device (CUDA) or of
another precision (float16, bfloat16) are trained the same way through
copies: each step gathers their gradients into the float32 CPU vector
(pinned where CUDA is present, copied without blocking) for the push, and
each pull copies the float32 weights back into every parameter's own
device and dtype. The float32 vector is then the master copy of the
weights: a half-precision parameter is its rounding, never read back.
torch.autocast needs nothing of the worker; a GradScaler is given to it
(Worker(..., scaler=s)), which unscales the gradient in float32 before the
push, skips a step whose gradient overflowed and moves the scale as
GradScaler.update would.

A model's buffers (a BatchNorm's running mean and variance) are not in
the vector: no gradient moves them. After every pull the worker sends them
to shard 0 and takes back the mean of every live worker's latest (integer
ones, num_batches_tracked, from the lowest live worker id): Worker's
buffers="average", the default; "local" keeps each worker's own. Shard 0
writes the last mean beside the job's model (buffers.json), and
load_buffers puts it into a model.

A model pacer does not have (a job of --model flat:n=N): num_params(model)
is its N, save_flat(model, "init.npz") its initial weights for pacer
server --init, and load_flat(path, model) loads a vector (pacer export's of
the job) back into it; to_flat and from_flat convert in memory. Under the
job's --ema, Worker.averaged() puts the shards' moving average of the
weights into the model for an evaluation (what such a job evaluates) and
the weights back after it; pacer export --average writes it.
"""
import base64
import contextlib
import copy
import json
import logging
import math
import os
import time

import numpy as np
import torch

from . import client as _client
from . import data as _data

log = logging.getLogger("pacer")


def _views(flat, params, layout):
    """For each parameter, a view of flat with its shape and pacer's element
    order (layout "pacer") or row-major order (layout "torch")."""
    out, off = [], 0
    for p in params:
        n = p.numel()
        seg = flat[off:off + n]
        shape = tuple(p.shape)
        if layout == "pacer" and p.dim() == 2:
            # pacer's dense layer stores its weight in×out; torch's Linear is out×in.
            v = seg.view(shape[1], shape[0]).t()
        elif layout == "pacer" and p.dim() == 4:
            # pacer's convolution stores cout×k×k×cin; torch's is cout×cin×k×k.
            co, ci, kh, kw = shape
            v = seg.view(co, kh, kw, ci).permute(0, 3, 1, 2)
        else:
            v = seg.view(shape)
        out.append(v)
        off += n
    return out


def _flat_order(t, layout):
    """t as a 1-D tensor in the vector's element order (_views' inverse),
    on t's device: a copy where the layout permutes."""
    if layout == "pacer" and t.dim() == 2:
        t = t.t()
    elif layout == "pacer" and t.dim() == 4:
        t = t.permute(0, 2, 3, 1)
    return t.reshape(-1)


def _synchronize(devices):
    """Waits for the copies queued on each device (a non-blocking copy into
    or out of pinned memory returns before the bytes move)."""
    for d in devices:
        if d.type == "cuda":
            torch.cuda.synchronize(d)
        else:
            mod = getattr(torch, d.type, None)
            if mod is not None and hasattr(mod, "synchronize"):
                mod.synchronize()


def _layout(model, layout):
    layout = layout or getattr(model, "pacer_layout", "torch")
    if layout not in ("torch", "pacer"):
        raise ValueError("layout %r: want 'torch' or 'pacer'" % layout)
    return layout


def _trained(model):
    return [p for p in model.parameters() if p.requires_grad]


def num_params(model):
    """The length of the model's flat vector: its parameters with
    requires_grad. A job of the model is --model flat:n=<this>."""
    return sum(p.numel() for p in _trained(model))


def to_flat(model, layout=None):
    """The model's parameters as one new float32 vector, in the order a
    Worker lays them out (the shards' vector)."""
    layout = _layout(model, layout)
    params = _trained(model)
    flat = torch.zeros(sum(p.numel() for p in params), dtype=torch.float32)
    with torch.no_grad():
        for p, v in zip(params, _views(flat, params, layout)):
            v.copy_(p)
    return flat.numpy()


def from_flat(model, flat, layout=None):
    """Copies a flat vector (to_flat's order: a pull, load_flat, pacer
    export of a flat job) into the model's parameters. A vector of another
    length is refused before anything changes."""
    layout = _layout(model, layout)
    params = _trained(model)
    flat = np.asarray(flat)
    n = sum(p.numel() for p in params)
    if flat.dtype != np.float32 or flat.ndim != 1 or flat.size != n:
        raise ValueError("a flat vector of %s %s for a model of %d parameters: want 1-D float32 of that length"
                         % (flat.dtype, flat.shape, n))
    t = torch.from_numpy(np.ascontiguousarray(flat))
    with torch.no_grad():
        for p, v in zip(params, _views(t, params, layout)):
            p.copy_(v)


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def precision(device="cpu", dtype="float32", autocast="none", model=None, sample=None):
    """The torch device, parameter dtype and autocast dtype (None: off) that
    a worker's --device, --dtype and --autocast name, checked before the
    worker joins: a small matrix product and its gradient (or, given a
    model and a sample input, a copy of the model's forward and backward
    pass) is tried in them, and what the device cannot train in is a
    ValueError naming the flag. Debian's PyTorch 1.13, for one, has no
    float16 matrix products on the CPU, and its CPU autocast is bfloat16
    only."""
    if dtype not in DTYPES:
        raise ValueError("--dtype %s: want one of %s" % (dtype, ", ".join(sorted(DTYPES))))
    if autocast not in ("none", "bfloat16", "float16"):
        raise ValueError("--autocast %s: want none, bfloat16 or float16" % autocast)
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ValueError("--device %s: %s" % (device, e)) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device %s: PyTorch sees no CUDA device here" % device)
    pdt = DTYPES[dtype]
    adt = None if autocast == "none" else DTYPES[autocast]
    for flag, dt, auto in (("--dtype %s" % dtype, pdt, None), ("--autocast %s" % autocast, torch.float32, adt)):
        if dt == torch.float32 and auto is None:
            continue
        try:
            if model is None:
                m = torch.nn.Linear(2, 3).to(dev, dt)
                x = torch.ones(4, 2)
            else:
                m = copy.deepcopy(model).to(dev, dt)
                x = sample
            with autocast_context(dev, auto):
                out = m(x.to(dev, dt))
            out.float().sum().backward()
        except (RuntimeError, ValueError) as e:
            raise ValueError("%s on %s: this PyTorch (%s) cannot train %s in it here (%s)"
                             % (flag, dev, torch.__version__, "this model" if model is not None else "a dense layer",
                                str(e).splitlines()[0])) from None
    return dev, pdt, adt


def autocast_context(device, dtype):
    """torch.autocast on device in dtype; a context that does nothing for
    dtype None."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=dtype)


def grad_scaler(device, autocast_dtype):
    """The GradScaler float16 autocast on CUDA wants (disabled otherwise:
    bfloat16's range needs none, and GradScaler scales only on CUDA), for
    Worker(..., scaler=)."""
    on = autocast_dtype == torch.float16 and torch.device(device).type == "cuda"
    return torch.cuda.amp.GradScaler(enabled=on)


FLAT_ARRAY = "flat"  # modelfile.FlatArray: the one array of a flat model's file


def save_flat(model_or_vector, path, layout=None):
    """Writes a flat model's file: an .npz of one float32 array "flat", the
    model's vector (or a vector). With the model's own initialization
    (seeded), it is the job's initial weights, pacer server --init; pacer
    export writes the same form. Returns the vector's length, the N of
    --model flat:n=N. Written to a temporary file and renamed."""
    if isinstance(model_or_vector, torch.nn.Module):
        v = to_flat(model_or_vector, layout)
    else:
        v = np.ascontiguousarray(model_or_vector, dtype=np.float32).reshape(-1)
    if not np.isfinite(v).all():
        raise ValueError("the vector is not finite (NaN or Inf): the shards would refuse it")
    if not path.endswith(".npz"):
        raise ValueError("%s: a flat model's file is an .npz" % path)
    tmp = path + ".tmp.npz"
    np.savez(tmp, **{FLAT_ARRAY: v})
    os.replace(tmp, path)
    return v.size


INIT_FILE_ENV = "PACER_INIT_FILE"


def write_init(model, layout=None):
    """Under pacer run, worker 0 is given $PACER_INIT_FILE: the model's
    initial weights (its own initialization, as built) go there, and the
    job's shards start from them, the model's size N being the file's.
    Worker does this itself before it joins; a script that dials the
    coordinator first (its own pacer.Client) calls it before that, or the
    shards never start. Returns N when it wrote the file, else None."""
    path = os.environ.get(INIT_FILE_ENV, "")
    if not path or os.path.exists(path):
        return None
    n = save_flat(model, path, layout)
    log.info("wrote the model's initial weights (%d parameters) to %s for pacer run's shards", n, path)
    return n


def load_flat(path, model=None, layout=None):
    """Reads a flat model's file (save_flat's, or pacer export's of a flat
    job) and returns its vector; with model, also copies it into the
    model's parameters (from_flat)."""
    with np.load(path) as z:
        if list(z.files) != [FLAT_ARRAY]:
            raise ValueError("%s holds %s; a flat model's file holds one array %r" % (path, list(z.files), FLAT_ARRAY))
        v = z[FLAT_ARRAY]
    if v.dtype != np.float32 or v.ndim != 1:
        raise ValueError("%s: array %r is %s %s, want 1-D float32" % (path, FLAT_ARRAY, v.dtype, v.shape))
    if model is not None:
        from_flat(model, v, layout)
    return v


def clip_norm(g, max_norm):
    """Scales the float32 vector g in place so that its 2-norm is at most
    max_norm, as the Go worker clips (optim.ClipNorm, PyTorch's
    clip_grad_norm_ over the whole gradient): by max_norm/(norm + 1e-6) when
    that is below 1. The squares are summed in float64 one after another, in
    the Go loop's order, and the factor is rounded to float32 before the
    float32 products, so the pushed gradient has the Go worker's bits.
    Returns the norm before clipping."""
    g64 = g.astype(np.float64)
    np.multiply(g64, g64, out=g64)  # a float32's square is exact in float64
    norm = math.sqrt(_data.seq_sum(g64))
    coef = max_norm / (norm + 1e-6)
    if coef < 1:
        np.multiply(g, np.float32(coef), out=g)
    return norm


def _buffer_vector(fbufs):
    """The float buffers as one float32 CPU vector, in model.buffers()
    order, each row-major."""
    if not fbufs:
        return np.zeros(0, dtype=np.float32)
    with torch.no_grad():
        return torch.cat([b.detach().reshape(-1).to("cpu", torch.float32) for b in fbufs]).numpy()


def _set_buffers(fbufs, ibufs, floats, counters):
    """Copies a float vector (_buffer_vector's order) and a list of
    integers into the buffers, each in its own device and dtype."""
    t = torch.from_numpy(np.ascontiguousarray(floats, dtype=np.float32))
    off = 0
    with torch.no_grad():
        for b in fbufs:
            n = b.numel()
            b.copy_(t[off:off + n].view(b.shape))
            off += n
        off = 0
        for b in ibufs:
            n = b.numel()
            b.copy_(torch.tensor(counters[off:off + n], dtype=torch.int64).view(b.shape))
            off += n


def load_buffers(path, model):
    """Puts the workers' mean buffers that shard 0 wrote at the job's end
    (OUT/buffers.json, beside model.npz) into the model's buffers: the
    BatchNorm statistics its exported weights (load_flat) evaluate with.
    A file of another model's buffers is refused before anything changes.
    Returns how many workers' buffers the mean is of."""
    with open(path) as f:
        d = json.load(f)
    fbufs = [b for b in model.buffers() if b.is_floating_point()]
    ibufs = [b for b in model.buffers() if not b.is_floating_point() and not b.is_complex()]
    floats = np.frombuffer(base64.b64decode(d["buffers"]), dtype="<f4").astype(np.float32)
    counters = [int(c) for c in d["counters"] or []]
    nf, ni = sum(b.numel() for b in fbufs), sum(b.numel() for b in ibufs)
    if floats.size != nf or len(counters) != ni:
        raise ValueError("%s holds %d float buffers and %d counters; the model has %d and %d"
                         % (path, floats.size, len(counters), nf, ni))
    _set_buffers(fbufs, ibufs, floats, counters)
    return int(d["workers"])


class Worker:
    """A PyTorch model as a pacer worker.

    Joining pulls the job's weights into the model. Each step() pushes the
    gradient backward() left in the parameters' .grad (scaled to at most the
    job's --clip-norm first, if it has one: clip_norm), reports the push to the
    coordinator, waits for its release and pulls the weights the paradigm
    names: the shards apply the job's optimizer, so the user's loop calls
    step() where it would call optimizer.step(). step() returns False once
    the job has ended (done).

    layout: "torch" (row-major, model.parameters() order) or "pacer" (pacer's
    own models); default: the model's pacer_layout attribute, else "torch".
    The job's shards must hold as many floats as the model has parameters:
    pacer's built-in models (--model mlp|cnn) match pacer.models. To build
    the model from the job, join first and pass the client:

        c = pacer.Client(coordinator)
        w = Worker(pacer.models.for_job(c.job), client=c)

    Parameters may live on any device and be of any floating dtype (the
    module's docstring says how); scaler: a torch.cuda.amp.GradScaler whose
    scale() multiplied the loss before backward() (a disabled one, as on a
    machine without CUDA, changes nothing). step() then unscales the
    gradient and updates the scale itself: call neither scaler.step nor
    scaler.update.

    buffers: "average" (the default) exchanges the model's buffers with
    shard 0 after every pull (sync_buffers): float buffers (a BatchNorm's
    running mean and variance) become the mean of every live worker's
    latest, integer ones (num_batches_tracked) the lowest live worker
    id's. "local" keeps each worker's own.
    """

    def __init__(self, model, coordinator=None, token=None, worker_id=None, layout=None, tls_ca=None, tls=False,
                 server_name=None, connect_timeout=60.0, check_finite=True, client=None, scaler=None,
                 buffers="average"):
        if buffers not in ("average", "local"):
            raise ValueError("buffers=%r: want 'average' or 'local'" % (buffers,))
        self.model = model
        self.layout = _layout(model, layout)
        # Before anything: the in-place views below replace the weights.
        write_init(model, layout)
        self.params = _trained(model)
        for p in self.params:
            if not p.is_floating_point():
                raise TypeError("parameter of shape %s is %s: pacer trains floating-point parameters"
                                % (tuple(p.shape), p.dtype))
        n = sum(p.numel() for p in self.params)
        # float32 on the CPU throughout: the parameters can be views of the
        # vectors the wire reads and writes, no copy either way. Anything
        # else is copied, each parameter keeping its device and dtype.
        self.in_place = all(p.dtype == torch.float32 and p.device.type == "cpu" for p in self.params)
        # Pinned memory lets the copies to and from a GPU run without
        # blocking (pageable memory makes them synchronous).
        pin = (not self.in_place and torch.cuda.is_available()
               and any(p.device.type == "cuda" for p in self.params))
        self._tflat = torch.zeros(n, dtype=torch.float32, pin_memory=pin)
        self._tgrad = torch.zeros(n, dtype=torch.float32, pin_memory=pin)
        self.flat = self._tflat.numpy()
        self.flat_grad = self._tgrad.numpy()
        self.pinned = pin
        self._pviews = _views(self._tflat, self.params, self.layout)
        self._gviews = _views(self._tgrad, self.params, self.layout)
        self._segs, off = [], 0
        for p in self.params:
            self._segs.append((off, off + p.numel()))
            off += p.numel()
        if self.in_place:
            with torch.no_grad():
                for p, v, g in zip(self.params, self._pviews, self._gviews):
                    p.data = v
                    p.grad = g
        # The model's float buffers (a BatchNorm's running statistics) and
        # its integer ones (num_batches_tracked), exchanged with shard 0
        # after every pull (sync_buffers); "local" keeps them per worker.
        self.buffers = buffers
        self._fbufs = [b for b in model.buffers() if b.is_floating_point()]
        self._ibufs = [b for b in model.buffers() if not b.is_floating_point() and not b.is_complex()]
        self.buffer_workers = 0  # how many workers' buffers the last exchange averaged
        self.check_finite = check_finite
        self.scaler = scaler
        self._good_steps = 0  # the scaler's finite steps since its scale last moved
        self.skipped = 0  # steps not pushed: the scaled gradient overflowed (GradScaler's skipped steps)
        self._averaged = False
        self.clipped = 0  # pushes whose gradient the job's --clip-norm scaled down
        if client is None:
            coordinator, worker_id = _client.from_env(coordinator, worker_id)
            client = _client.Client(coordinator, token=token, worker_id=worker_id, tls_ca=tls_ca, tls=tls,
                                    server_name=server_name, connect_timeout=connect_timeout)
        self.client = client
        try:
            self.client.attach(self.flat, self.flat_grad)
            self._copy_back()
        except BaseException:
            self.client.close()
            raise

    @property
    def job(self):
        """The job description (pacer.client.Job): batch, epochs, workers, ..."""
        return self.client.job

    @property
    def id(self):
        return self.client.id

    @property
    def done(self):
        return self.client.done

    def zero_grad(self):
        """Zeroes the gradient: the flat vector, and in place the .grad views
        of float32 CPU parameters (giving back views a
        model.zero_grad(set_to_none=True) took away); other parameters'
        .grad are set to None, as PyTorch's zero_grad does."""
        self.flat_grad.fill(0)
        if not self.in_place:
            for p in self.params:
                p.grad = None
            return
        for p, g in zip(self.params, self._gviews):
            if p.grad is None or p.grad.data_ptr() != g.data_ptr():
                p.grad = g

    def _devices(self):
        return {p.device for p in self.params if p.device.type != "cpu"}

    def _gather(self):
        """Puts the parameters' gradients into flat_grad."""
        if not self.in_place:
            for p, (lo, hi) in zip(self.params, self._segs):
                dst = self._tgrad[lo:hi]
                if p.grad is None:
                    dst.zero_()  # unused in this iteration's graph
                else:
                    # Converted to float32 on the gradient's device, then one
                    # contiguous copy into the (pinned) vector.
                    dst.copy_(_flat_order(p.grad.detach(), self.layout), non_blocking=True)
            _synchronize(self._devices())  # the push reads the vector next
            return
        for p, v, g in zip(self.params, self._pviews, self._gviews):
            if p.data_ptr() != v.data_ptr() or p.data.stride() != v.stride():
                raise RuntimeError("parameter of shape %s no longer lives in the worker's vector "
                                   "(replaced, or the model moved); build the Worker after such changes"
                                   % (tuple(p.shape),))
            if p.grad is None:
                g.zero_()  # unused in this iteration's graph
            elif p.grad.data_ptr() != g.data_ptr():
                g.copy_(p.grad)  # the user replaced .grad: copy it in, then give the view back
                p.grad = g

    def _copy_back(self):
        """Puts the float32 vector (the weights just pulled, the master
        copy) into the parameters, each in its own device and dtype. The
        copies to a GPU are queued without blocking: _settle waits for them
        before the vector is written again."""
        if self.in_place:
            return
        with torch.no_grad():
            for p, (lo, hi) in zip(self.params, self._segs):
                src = self._tflat[lo:hi]
                if src.device != p.device:
                    src = src.to(p.device, non_blocking=True)
                p.copy_(_views(src, [p], self.layout)[0])

    def _settle(self):
        """Waits for the copies out of the vector (_copy_back) to finish."""
        if not self.in_place:
            _synchronize(self._devices())

    def _scaler_on(self):
        return self.scaler is not None and self.scaler.is_enabled()

    def _unscale(self):
        """Divides the gathered gradient by the scaler's scale, in float32
        (by its float32 reciprocal, as GradScaler unscales), and moves the
        scale as GradScaler.update does: times the backoff factor after a
        gradient that overflowed, times the growth factor after its growth
        interval of finite ones. Returns whether the gradient is finite."""
        sc = self.scaler
        scale = float(sc.get_scale())
        finite = bool(np.isfinite(self.flat_grad).all())
        if finite:
            np.multiply(self.flat_grad, np.float32(1.0 / scale), out=self.flat_grad)
            finite = bool(np.isfinite(self.flat_grad).all())
        if not finite:
            self._good_steps = 0
            new = scale * sc.get_backoff_factor()
        else:
            self._good_steps += 1
            new = scale
            if self._good_steps >= sc.get_growth_interval():
                self._good_steps = 0
                new = scale * sc.get_growth_factor()
        sc.update(new)
        return finite

    def step(self, loss=None):
        """Pushes the gradient, waits as the paradigm says and pulls the new
        weights into the model. False: the job has ended. loss (the batch's
        loss, a number or a one-element tensor) goes with the push into the
        job's batch_loss. With an enabled scaler, a gradient that overflowed
        is not pushed (the step is skipped, as GradScaler skips
        optimizer.step: skipped counts them) and True returned: the next
        batch is computed at the lowered scale from the same weights."""
        if self._averaged:
            raise RuntimeError("step() inside averaged(): the model holds θ̄, not the weights it trains")
        if self.client.done:
            return False
        self._gather()
        if self._scaler_on() and not self._unscale():
            self.skipped += 1
            log.info("worker %d: the scaled gradient overflowed; step skipped, the scale lowered to %g",
                     self.id, float(self.scaler.get_scale()))
            return True
        if self.check_finite and not np.isfinite(self.flat_grad).all():
            raise FloatingPointError("worker %d: the model's gradient is not finite (NaN or Inf): "
                                     "the shards would refuse it" % self.id)
        if loss is not None:
            # Refused before the clip below changes the gradient.
            loss = _client.check_loss(loss.item() if isinstance(loss, torch.Tensor) else loss)
        if self.job.clip_norm > 0:
            # The job's --clip-norm: every worker of the job, Go or PyTorch,
            # clips its whole gradient before the push.
            norm = clip_norm(self.flat_grad, self.job.clip_norm)
            if self.job.clip_norm / (norm + 1e-6) < 1:  # clip_norm's test: it scaled
                self.clipped += 1
        self._settle()  # the pull below writes the vector the last copy-back read
        ok = self.client.step(loss)
        if ok:
            self._copy_back()
            self.sync_buffers()
        return ok

    def sync_buffers(self):
        """Sends the model's buffers to shard 0 and puts back what the job's
        workers hold together: each float buffer (a BatchNorm's running
        mean and variance) the mean of every live worker's latest, each
        integer buffer (num_batches_tracked) the lowest live worker id's
        (worker 0's). step() calls it after every pull, so a worker
        evaluates and trains on from statistics of all the workers'
        batches; shard 0 writes the last mean beside the job's model
        (buffers.json, load_buffers). Returns how many workers' buffers
        the mean is of; 0, changing nothing, for a model without buffers,
        under buffers="local", or when the job has just ended (step()
        then returns False)."""
        if self.buffers != "average" or not (self._fbufs or self._ibufs):
            return 0
        floats = _buffer_vector(self._fbufs)
        counters = [int(v) for b in self._ibufs for v in b.detach().reshape(-1).tolist()]
        try:
            mean, got, workers = self.client.exchange_buffers(floats, counters)
        except _client.JobDone:
            return 0
        _set_buffers(self._fbufs, self._ibufs, mean, got)
        self.buffer_workers = workers
        return workers

    def pull_average(self, out=None):
        """θ̄, the shards' moving average of the weights under the job's
        --ema, as a flat vector in the model's layout (from_flat and
        save_flat take it); pacer.client.Client.pull_average says more.
        Raises pacer.NoAverage when the job keeps none."""
        return self.client.pull_average(out)

    @contextlib.contextmanager
    def averaged(self):
        """Puts θ̄ (pull_average) into the model's parameters for the
        block and the weights it trains back after it, bit for bit:

            with w.averaged():
                acc = evaluate(model)

        what shard 0 evaluates for pacer's own models under --ema. The
        parameters stay where they live (the worker's vector), so nothing
        about the model changes but their values; step() is refused inside.
        NoAverage (a job without --ema) is raised before anything
        changes."""
        if self._averaged:
            raise RuntimeError("averaged() inside averaged()")
        self._settle()  # under PSP, pull_average lands late replies in the vector first
        avg = self.client.pull_average()
        saved = self.flat.copy()
        self.flat[:] = avg
        self._copy_back()
        self._averaged = True
        try:
            yield self.model
        finally:
            self._settle()
            self.flat[:] = saved
            self._copy_back()
            self._averaged = False

    def close(self):
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
