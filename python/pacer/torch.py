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
gradient in place and a pull lands in the model without a copy.

A model pacer does not have (a job of --model flat:n=N): num_params(model)
is its N, save_flat(model, "init.npz") its initial weights for pacer
server --init, and load_flat(path, model) loads a vector (pacer export's of
the job) back into it; to_flat and from_flat convert in memory. Under the
job's --ema, Worker.averaged() puts the shards' moving average of the
weights into the model for an evaluation (what such a job evaluates) and
the weights back after it; pacer export --average writes it.
"""
import contextlib
import math
import os
import time

import numpy as np
import torch

from . import client as _client
from . import data as _data


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
    """

    def __init__(self, model, coordinator=None, token=None, worker_id=-1, layout=None, tls_ca=None, tls=False,
                 server_name=None, connect_timeout=60.0, check_finite=True, client=None):
        self.model = model
        self.layout = _layout(model, layout)
        self.params = _trained(model)
        for p in self.params:
            if p.dtype != torch.float32 or p.device.type != "cpu":
                raise TypeError("parameter of shape %s is %s on %s: pacer workers train float32 on the CPU"
                                % (tuple(p.shape), p.dtype, p.device))
        n = sum(p.numel() for p in self.params)
        self.flat = np.zeros(n, dtype=np.float32)
        self.flat_grad = np.zeros(n, dtype=np.float32)
        self._tflat = torch.from_numpy(self.flat)
        self._tgrad = torch.from_numpy(self.flat_grad)
        self._pviews = _views(self._tflat, self.params, self.layout)
        self._gviews = _views(self._tgrad, self.params, self.layout)
        with torch.no_grad():
            for p, v, g in zip(self.params, self._pviews, self._gviews):
                p.data = v
                p.grad = g
        self.check_finite = check_finite
        self._averaged = False
        self.clipped = 0  # pushes whose gradient the job's --clip-norm scaled down
        if client is None:
            if coordinator is None:
                raise ValueError("give the coordinator's address (or a joined pacer.Client)")
            client = _client.Client(coordinator, token=token, worker_id=worker_id, tls_ca=tls_ca, tls=tls,
                                    server_name=server_name, connect_timeout=connect_timeout)
        self.client = client
        try:
            self.client.attach(self.flat, self.flat_grad)
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
        """Zeroes the flat gradient (and gives back .grad views a
        model.zero_grad(set_to_none=True) took away)."""
        self.flat_grad.fill(0)
        for p, g in zip(self.params, self._gviews):
            if p.grad is None or p.grad.data_ptr() != g.data_ptr():
                p.grad = g

    def _gather(self):
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

    def step(self, loss=None):
        """Pushes the gradient, waits as the paradigm says and pulls the new
        weights into the model. False: the job has ended. loss (the batch's
        loss, a number or a one-element tensor) goes with the push into the
        job's batch_loss."""
        if self._averaged:
            raise RuntimeError("step() inside averaged(): the model holds θ̄, not the weights it trains")
        if self.client.done:
            return False
        self._gather()
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
        return self.client.step(loss)

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
        avg = self.client.pull_average()
        saved = self.flat.copy()
        self.flat[:] = avg
        self._averaged = True
        try:
            yield self.model
        finally:
            self.flat[:] = saved
            self._averaged = False

    def close(self):
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
