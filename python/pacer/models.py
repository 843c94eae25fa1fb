"""pacer's built-in models (nn/model.go) in PyTorch, in pacer's parameter
layout (pacer_layout = "pacer"), so a PyTorch worker trains a job of
--model mlp, cnn, alexnet-small or cifar-net beside Go workers, on the same
shards. They take Fashion-MNIST's 1x28x28 images, the only data set the
PyTorch workers read.

A PyTorch checkpoint of the same architecture (a state_dict in PyTorch's
own layout, docs/model-format.md: what pacer export writes and
python/eval_npz.py's modules hold) goes into pacer's layout and back:

    flat = flat_from_state_dict("cnn", torch.load("cnn.pt"))   # the shards' vector
    sd = state_dict_from_flat("cnn", flat)                     # and back
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """784 -> 256 -> ReLU -> 128 -> ReLU -> 10 (pacer's mlp, 235,146 parameters)."""

    pacer_layout = "pacer"

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.reshape(x.shape[0], -1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CNN(nn.Module):
    """pacer's cnn (184,586 parameters): conv 5x5 32, pool 2, ReLU, conv 5x5
    64, pool 2, ReLU, 1024 -> 128, ReLU, 128 -> 10. The activation before fc1
    is flattened in pacer's NHWC order (row, column, channel), the order its
    fc1 weight's rows are stored in."""

    pacer_layout = "pacer"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5)
        self.conv2 = nn.Conv2d(32, 64, 5)
        self.fc1 = nn.Linear(64 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.permute(0, 2, 3, 1).flatten(1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class AlexNetSmall(nn.Module):
    """pacer's alexnet-small on 1x28x28 (644,554 parameters; docs/models.md):
    conv 5x5 32 pad 2, conv 5x5 64 pad 2, conv 3x3 128 pad 1, each then pool 2
    and ReLU, 1152 -> 384, ReLU, 384 -> 192, ReLU, 192 -> 10. Flattened
    before fc1 in pacer's NHWC order, as the CNN."""

    pacer_layout = "pacer"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.fc1 = nn.Linear(128 * 3 * 3, 384)
        self.fc2 = nn.Linear(384, 192)
        self.fc3 = nn.Linear(192, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        for conv in (self.conv1, self.conv2, self.conv3):
            x = F.relu(F.max_pool2d(conv(x), 2))
        x = x.permute(0, 2, 3, 1).flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CifarNet(nn.Module):
    """pacer's cifar-net on 1x28x28 (83,498 parameters; docs/models.md):
    conv 5x5 32, 32, 64, each pad 2, then pool 2 and ReLU, 576 -> 10.
    Flattened before fc1 in pacer's NHWC order, as the CNN."""

    pacer_layout = "pacer"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 32, 5, padding=2)
        self.conv3 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 3 * 3, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        for conv in (self.conv1, self.conv2, self.conv3):
            x = F.relu(F.max_pool2d(conv(x), 2))
        return self.fc1(x.permute(0, 2, 3, 1).flatten(1))


MODELS = {"mlp": MLP, "cnn": CNN, "alexnet-small": AlexNetSmall, "cifar-net": CifarNet}


def for_job(job):
    """The PyTorch model of a job's --model (a pacer.client.Job)."""
    try:
        return MODELS[job.model]()
    except KeyError:
        if job.model.startswith("flat:"):
            raise ValueError("job model %s is a model of your own: build it and pass it to pacer.torch.Worker "
                             "(docs/python.md)" % job.model) from None
        raise ValueError("job model %r has no PyTorch counterpart (pacer.torch models: %s)"
                         % (job.model, ", ".join(MODELS))) from None


# The image models' fc1 reads its input in pacer's (row, column, channel)
# order; PyTorch's flatten of NCHW reads (channel, row, column). Per model,
# fc1's (out, rows, columns, channels) on 28x28 inputs.
_FC1 = {"CNN": (128, 4, 4, 64), "AlexNetSmall": (384, 3, 3, 128), "CifarNet": (10, 3, 3, 64)}


def _fc1_to_torch(model, w):
    o, r, c, ch = _FC1[type(model).__name__]
    return w.reshape(o, r, c, ch).permute(0, 3, 1, 2).reshape(o, r * c * ch)


def _fc1_from_torch(model, w):
    o, r, c, ch = _FC1[type(model).__name__]
    return w.reshape(o, ch, r, c).permute(0, 2, 3, 1).reshape(o, r * c * ch)


def _model(name_or_model):
    if isinstance(name_or_model, nn.Module):
        if type(name_or_model) not in MODELS.values():
            raise TypeError("%s is not one of pacer.models' (%s)" % (type(name_or_model).__name__, ", ".join(MODELS)))
        return name_or_model
    try:
        return MODELS[name_or_model]()
    except KeyError:
        raise ValueError("model %r: pacer's models are %s" % (name_or_model, ", ".join(MODELS))) from None


def torch_state_dict(model):
    """model's (pacer.models' MLP or CNN) weights as a state_dict in
    PyTorch's own layout (docs/model-format.md), new tensors: what
    torch.save keeps and an ordinary torch module of the architecture
    loads."""
    sd = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    if type(model).__name__ in _FC1:
        sd["fc1.weight"] = _fc1_to_torch(model, sd["fc1.weight"]).contiguous()
    return sd


def load_torch_state_dict(model, state_dict):
    """Loads a state_dict in PyTorch's own layout (torch_state_dict's, a
    torch.load of one, pacer export's arrays) into model (pacer.models' MLP
    or CNN); names and shapes must be the model's (strict), or nothing
    changes."""
    sd = {k: (torch.from_numpy(v) if not isinstance(v, torch.Tensor) else v) for k, v in state_dict.items()}
    want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in sd.items()}
    if want != got:
        raise ValueError("state_dict %s is not %s's %s" % (sorted(got.items()), type(model).__name__, sorted(want.items())))
    if type(model).__name__ in _FC1:
        sd["fc1.weight"] = _fc1_from_torch(model, sd["fc1.weight"])
    model.load_state_dict(sd, strict=True)
    return model


def flat_from_state_dict(name, state_dict):
    """The flat vector in pacer's layout (what the shards hold, pacer's Go
    models' order, nn/layout.go) of a PyTorch state_dict of pacer's model
    name (MODELS: mlp, cnn, alexnet-small, cifar-net)."""
    from . import torch as ptorch
    return ptorch.to_flat(load_torch_state_dict(_model(name), state_dict))


def state_dict_from_flat(name, flat):
    """The inverse of flat_from_state_dict: a state_dict in PyTorch's own
    layout from a flat vector in pacer's (a pull, a checkpoint's weights)."""
    from . import torch as ptorch
    m = _model(name)
    ptorch.from_flat(m, flat)
    return torch_state_dict(m)
