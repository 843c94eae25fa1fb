#!/usr/bin/python3
"""The Python side of live's BenchmarkPythonPushPull (live/bench_python_test.go):
a worker's data connection to a shard, driven by lines on stdin.

    push R   push the block as round R's gradient (tag R, read version R-1)
    pull R   pull the block at version >= R into a reused buffer, then
             acknowledge it (a one-way Heartbeat, as every worker does)

Each command answers one line: the seconds the call took, measured here
around pacer.wire's call, as the Go side measures its own.
"""
import argparse
import sys
import time

import numpy as np

from pacer import wire


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--addr", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--worker", type=int, default=1)
    ap.add_argument("--n", type=int, required=True, help="floats in the shard's block")
    a = ap.parse_args()
    c = wire.Conn(a.addr, a.token, "worker", worker=a.worker)
    g = np.random.default_rng(1).standard_normal(a.n).astype(np.float32)
    buf = np.empty(a.n, dtype=np.float32)
    buf.fill(0)  # faulted in before the first timed pull, as the Go side's reused frame is
    for line in sys.stdin:
        op, r = line.split()
        r = int(r)
        t0 = time.perf_counter()
        if op == "push":
            resp = c.call(wire.PUSH, floats=g, worker=a.worker, tag=r, extra=r - 1)
            if resp.flags & 2:
                sys.exit("bench_client: push of round %d dropped" % r)
        elif op == "pull":
            resp = c.call(wire.PULL, worker=a.worker, tag=r - 1, extra=r, into=buf)
            if resp.payload is not None or resp.count != a.n:
                sys.exit("bench_client: pull of round %d: %d floats, not received in place" % (r, resp.count))
            c.send(wire.HEARTBEAT, worker=a.worker, tag=resp.tag)
        else:
            sys.exit("bench_client: unknown command %r" % op)
        print("%.9f" % (time.perf_counter() - t0), flush=True)
    c.close()


if __name__ == "__main__":
    main()
