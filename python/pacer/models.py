"""pacer's built-in models (nn/model.go) in PyTorch, in pacer's parameter
layout (pacer_layout = "pacer"), so a PyTorch worker trains a job of
--model mlp or --model cnn beside Go workers, on the same shards."""
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


MODELS = {"mlp": MLP, "cnn": CNN}


def for_job(job):
    """The PyTorch model of a job's --model (a pacer.client.Job)."""
    try:
        return MODELS[job.model]()
    except KeyError:
        raise ValueError("job model %r has no PyTorch counterpart (pacer.torch models: %s)"
                         % (job.model, ", ".join(MODELS))) from None
