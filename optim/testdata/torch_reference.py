#!/usr/bin/env python3
"""Prints reference runs of PyTorch's optimizers as JSON: the values
optim's TestTorchReference holds pacer's rules to (torch_reference.json
beside this file is this script's output, committed).

Every case starts from the same small float32 vector and applies a few
steps of fixed gradients with a rate that changes between steps, so
momentum buffers, weight decay, Adam's bias correction and a schedule
all act, and so do centered RMSprop's mean gradient and AdamW's
decoupled decay. The gradients and the start are written out as float32 values
the Go test reads back exactly.

    /usr/bin/python3 optim/testdata/torch_reference.py > optim/testdata/torch_reference.json
"""
import json
import math
import sys

import torch

N = 6
STEPS = 5


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32))


def start():
    return [f32(0.5 * math.cos(1.7 * i + 0.3)) for i in range(N)]


def grads():
    # Mixed signs and scales, and a zero gradient on one coordinate at one
    # step, where the adaptive rules divide by the smallest root.
    return [[0.0 if (s, i) == (2, 3) else f32(math.sin(0.9 * i + 1.3 * s) * 10 ** ((i % 3) - 1))
             for i in range(N)] for s in range(STEPS)]


RATES = [0.01, 0.01, 0.005, 0.02, 0.001]

# name, pacer's --optimizer spec, momentum, nesterov, weight decay, rate
# factor, the torch constructor.
CASES = [
    ("sgd-momentum", "sgd", 0.9, False, 0.01, 10,
     lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9, weight_decay=0.01)),
    ("sgd-nesterov", "sgd", 0.5, True, 0.0, 10,
     lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.5, nesterov=True)),
    ("rmsprop", "rmsprop", 0.0, False, 0.0, 1,
     lambda p, lr: torch.optim.RMSprop(p, lr=lr)),
    ("rmsprop-momentum-wd", "rmsprop:alpha=0.9,eps=1e-6", 0.9, False, 0.05, 1,
     lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.9, eps=1e-6, momentum=0.9, weight_decay=0.05)),
    ("adam", "adam", 0.0, False, 0.0, 1,
     lambda p, lr: torch.optim.Adam(p, lr=lr)),
    ("adam-wd-betas", "adam:b1=0.3,b2=0.9,eps=1e-6", 0.0, False, 0.1, 5,
     lambda p, lr: torch.optim.Adam(p, lr=lr, betas=(0.3, 0.9), eps=1e-6, weight_decay=0.1)),
    ("rmsprop-centered", "rmsprop:centered=true", 0.0, False, 0.0, 1,
     lambda p, lr: torch.optim.RMSprop(p, lr=lr, centered=True)),
    ("rmsprop-centered-momentum-wd", "rmsprop:alpha=0.9,eps=1e-6,centered=true", 0.9, False, 0.05, 1,
     lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.9, eps=1e-6, momentum=0.9, weight_decay=0.05,
                                       centered=True)),
    # AdamW's own default decay (0.01) given explicitly: pacer's
    # --weight-decay defaults to 0.
    ("adamw", "adamw", 0.0, False, 0.01, 1,
     lambda p, lr: torch.optim.AdamW(p, lr=lr, weight_decay=0.01)),
    # A decay large enough that lr·wd moves the weights by more than the
    # tolerance every step.
    ("adamw-wd-betas", "adamw:b1=0.3,b2=0.9,eps=1e-6", 0.0, False, 0.5, 5,
     lambda p, lr: torch.optim.AdamW(p, lr=lr, betas=(0.3, 0.9), eps=1e-6, weight_decay=0.5)),
]


def run(make, factor):
    w = torch.tensor(start(), dtype=torch.float32, requires_grad=True)
    rates = [r * factor for r in RATES]
    opt = make([w], rates[0])
    after = []
    for s, g in enumerate(grads()):
        for group in opt.param_groups:
            group["lr"] = rates[s]
        w.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
        after.append([float(x) for x in w.detach()])
    st = opt.state[w]
    state = {}
    for key, name in (("momentum_buffer", "velocity"), ("exp_avg", "velocity"),
                      ("square_avg", "square"), ("exp_avg_sq", "square"), ("grad_avg", "mean")):
        if st.get(key) is not None:
            state[name] = [float(x) for x in st[key]]
    if "step" in st and "exp_avg" in st:
        state["step"] = int(st["step"])
    return rates, after, state


def main():
    cases = []
    for name, spec, mom, nesterov, wd, factor, make in CASES:
        rates, after, state = run(make, factor)
        cases.append({"name": name, "optimizer": spec, "momentum": mom, "nesterov": nesterov,
                      "weight_decay": wd, "rates": rates, "after": after, "state": state})
    json.dump({"torch": torch.__version__.split("+")[0], "start": start(), "grads": grads(), "cases": cases},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
