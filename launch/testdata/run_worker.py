"""A worker of pacer run's tests without PyTorch: a flat model of N
floats, its gradient the weights themselves (so each step shrinks them by
the learning rate). It prints the environment pacer run gave it, and
misbehaves as RUN_WORKER_FAIL asks: "exit:ID" exits 4 as worker ID,
"early" leaves the job before it ends."""
import json
import os
import sys

import numpy as np

import pacer

N = 10
me = os.environ.get("PACER_WORKER_ID")
env = {k: os.environ.get(k) for k in ("PACER_COORDINATOR", "PACER_WORKER_ID", "PACER_WORKERS", "RANK", "WORLD_SIZE",
                                      "LOCAL_RANK", "LOCAL_WORLD_SIZE", "PACER_INIT_FILE", "PACER_CONTROL_TOKEN")}
env["token_set"] = bool(os.environ.get("PACER_TOKEN"))
print(json.dumps({"event": "env", "env": env}), flush=True)
fail = os.environ.get("RUN_WORKER_FAIL", "")
if fail == "exit:" + me:
    print("worker %s fails on purpose" % me, file=sys.stderr, flush=True)
    sys.exit(4)
init = os.environ.get("PACER_INIT_FILE")
if init:
    tmp = init + ".tmp.npz"
    np.savez(tmp, flat=np.arange(1, N + 1, dtype=np.float32))
    os.replace(tmp, init)
if fail == "early":
    sys.exit(0)
c = pacer.Client()
params, grad = np.zeros(N, np.float32), np.zeros(N, np.float32)
c.attach(params, grad)
steps = 0
while True:
    grad[:] = params
    if not c.step():
        break
    steps += 1
print(json.dumps({"event": "done", "id": c.id, "steps": steps}), flush=True)
c.close()
