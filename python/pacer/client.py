"""A pacer worker's side of a live job, in Python: what live/worker/worker.go,
worker_ctl.go and wlink.go do, for parameters held in a float32 array.

The engine knows nothing of models: it pulls the job's weights into a flat
float32 array and pushes a flat float32 gradient of the same length, cut
into the job's shard ranges (job.Ranges). pacer.torch puts a model's
parameters in such an array.
"""
import base64
import json
import logging
import math
import os
import random
import select
import ssl
import struct
import threading
import time

import numpy as np

from . import wire

log = logging.getLogger("pacer")

# The live package's application flag bits (live/proto).
FLAG_PENDING = 1   # PullResp: the shard's version is below the minimum; a ready notice follows
FLAG_DROPPED = 2   # PushAck: the aggregator refused the gradient (stale or surplus)
FLAG_REJOINED = 4  # Clock reply: the worker had been removed and was admitted again
FLAG_READY = 8     # one-way PullResp: the version a pending pull waits for exists

JOB_VERSION = 1  # job.Version: the description this client reads


# The largest loss the coordinator takes (live.maxLoss, float32's largest):
# under it the coordinator's float64 total cannot overflow.
MAX_LOSS = 3.4028234663852886e38


def check_loss(loss):
    """A mini-batch loss as the coordinator takes it: a finite, non-negative
    float of float32's range (it refuses anything else, failing the report)."""
    v = float(loss)
    if not math.isfinite(v) or v < 0 or v > MAX_LOSS:
        raise ValueError("the mini-batch loss must be a finite, non-negative number, at most %g, not %r" % (MAX_LOSS, v))
    return v

# paradigm.Kind values as the description carries them.
KINDS = {1: "bsp", 2: "asp", 3: "ssp", 4: "dssp", 5: "elastic", 6: "backup", 7: "psp", 8: "softsync", 9: "delay"}

# How long pull_average redials a shard whose connection broke, watching
# for the job's end meanwhile, before it gives up.
AVERAGE_GIVE_UP = 60.0

# The pace of a waiting worker's redials of the coordinator (_Redials): a
# delay doubling from REDIAL_MIN to REDIAL_MAX seconds while connections
# die young, back to REDIAL_MIN once one has lived REDIAL_RESET seconds.
REDIAL_MIN, REDIAL_MAX, REDIAL_RESET = 0.05, 1.0, 5.0

# A pull that waits for its version polls at this interval besides the
# shard's ready notice, as the Go worker does (a safety net).
PENDING_POLL = 0.5

# A push a shard refuses as unavailable is sent again after a pause
# doubling from PUSH_RETRY_MIN to PUSH_RETRY_MAX seconds (the Go worker's
# 10 ms to 1 s).
PUSH_RETRY_MIN, PUSH_RETRY_MAX = 0.01, 1.0


class JobDone(Exception):
    """The coordinator has ended the job."""


class JobError(Exception):
    """The job cannot be run by this worker (wrong model size, an
    unsupported paradigm option, a mismatched coordinator)."""


class _Rejoined(Exception):
    """The coordinator had removed this worker while its control
    connection was down and admitted it again: the wait it was in starts
    over, from a full pull at the clock the coordinator named."""


class NoAverage(Exception):
    """The shards keep no moving average of the weights: the job runs
    without --ema. The message is the shard's refusal."""


class _Redials:
    """Paces _redial_waiting: a coordinator in a crash loop accepts the
    Hello and drops the connection at once, and a wait that redialled
    back to back would hammer it (dial_retry's backoff covers only dials
    that fail)."""

    def __init__(self):
        self.delay = REDIAL_MIN

    def next(self, lived):
        """The delay before a redial, given how long the connection it
        replaces lived (seconds)."""
        if lived >= REDIAL_RESET:
            self.delay = REDIAL_MIN
        d = self.delay
        self.delay = min(2 * d, REDIAL_MAX)
        return d


def from_env(coordinator=None, worker_id=None):
    """The coordinator's address and the worker id, each from the
    environment pacer run sets when not given ($PACER_COORDINATOR,
    $PACER_WORKER_ID; without it the id is -1: the coordinator assigns
    one). ValueError, naming the variable, for none or a bad one."""
    if coordinator is None:
        coordinator = os.environ.get("PACER_COORDINATOR", "")
        if not coordinator:
            raise ValueError("no coordinator: give its address (host:port) or set $PACER_COORDINATOR (pacer run sets it)")
    if worker_id is None:
        v = os.environ.get("PACER_WORKER_ID", "")
        try:
            worker_id = int(v) if v else -1
        except ValueError:
            raise ValueError("$PACER_WORKER_ID=%r: want a worker id, an integer" % v) from None
    return coordinator, worker_id


def ranges(n, s):
    """job.Ranges: n parameters cut into s contiguous near-equal blocks."""
    return [(i * n // s, (i + 1) * n // s) for i in range(s)]


class Job:
    """The job description the coordinator sent (job.Description)."""

    def __init__(self, desc):
        if desc.get("version") != JOB_VERSION:
            raise JobError("job description version %r: this client reads version %d (a pacer of another build?)"
                           % (desc.get("version"), JOB_VERSION))
        self.desc = desc
        j = desc["job"]
        self.spec = j["Spec"]
        self.kind = KINDS.get(self.spec.get("Kind"))
        if self.kind is None:
            raise JobError("unknown paradigm kind %r" % self.spec.get("Kind"))
        if self.kind == "elastic" and self.spec.get("LocalOnly"):
            # Its workers step their own copies inside a superstep and pull
            # only after a barrier (the release's tag): not built here.
            raise JobError("elastic apply=local: this client does not step its own copy between barriers "
                           "(use Go workers, or apply=arrival)")
        self.workers, self.shards = j["Workers"], j["Shards"]
        self.model, self.dataset = j["Model"], j["Dataset"]
        # A flat model's (flat:n=N, a model of your own) initial weights' digest.
        self.init_sha256 = j.get("InitSHA256", "")
        self.batch, self.epochs, self.seed = j["Batch"], j["Epochs"], j["Seed"]
        self.lr, self.train_limit = j["LR"], j.get("TrainLimit", 0)
        self.train_n = desc.get("train_n", 0)
        self.heartbeat_timeout = j.get("HeartbeatTimeout", 5_000_000_000) / 1e9
        self.timing = j.get("Timing") or {}
        # Recipes the worker carries out (job.Config): "global" sampling
        # draws from the whole training set; a positive clip_norm scales
        # each gradient to at most that 2-norm before the push; "mean"
        # normalization subtracts the training set's per-channel mean.
        self.sampling = j.get("Sampling", "") or "shard"
        self.clip_norm = j.get("ClipNorm", 0.0)
        self.normalize = j.get("Normalize", "") or "none"
        # --ema's decay D: the shards keep θ̄ ← D·θ̄ + (1−D)·θ (0: none).
        self.ema = j.get("EMA", 0.0) or 0.0
        # --ema-time's τ in seconds: θ̄ fades in the shards' time instead
        # (an update dt after the last weighs 1−exp(−dt/τ); 0: none).
        self.ema_time = (j.get("EMATime", 0) or 0) / 1e9
        # Whether the shards keep θ̄ at all (pull_average answers).
        self.keeps_average = self.ema > 0 or self.ema_time > 0

    @property
    def pushes(self):
        """The job's total pushes, all workers together (Description.Pushes)."""
        return max(1, int(self.epochs * self.train_n / self.batch + 0.999999))


class Puller:
    """paradigm.Puller for the live paradigms: the minimum version each
    shard must reach before it answers, per iteration."""

    def __init__(self, job):
        self.kind, self.shards = job.kind, job.shards
        self.partial, self.grace = self.shards, 0.0
        if self.kind == "psp":
            # PSP: ⌈b·S⌉ fresh blocks suffice (−1e-9: a b·S whole in decimal
            # does not round up), then τ2's grace for the rest.
            bfrac = job.spec.get("BFrac", 0) or 1.0
            self.partial = max(1, min(self.shards, math.ceil(bfrac * self.shards - 1e-9)))
            self.grace = job.spec.get("T2", 0) / 1e9
        self.max_seen = 0

    def min_versions(self, clock, read, first):
        self.max_seen = 0
        out = []
        for i in range(self.shards):
            if self.kind == "bsp":
                m = clock  # the round just pushed for must be applied (first pull too: a returning id)
            elif first:
                m = 0
            elif self.kind == "psp":
                m = clock
            elif self.kind == "backup":
                m = read[i] + 1  # a version newer than the one read
            else:
                m = 0
            out.append(m)
        return out

    def saw(self, version):
        self.max_seen = max(self.max_seen, version)

    def next_clock(self, clock):
        # Under PSP a worker that is behind jumps to the largest version it saw.
        if self.kind == "psp" and self.max_seen > clock:
            return self.max_seen
        return clock


class Client:
    """One worker of a live job.

    Client(coordinator) joins: it dials shard 0's control role with the job
    token and reads the job from the HelloOK. attach(params, grad) then dials
    every shard and checks that the arrays' length is the job's model's;
    pull() fills params, push() sends grad, and report() tells the gate,
    waiting for its release. step() is push, report and pull in the Go
    worker's order. Not thread-safe: one thread drives it (a second, its own,
    sends the heartbeats).
    """

    def __init__(self, coordinator=None, token=None, worker_id=None, tls_ca=None, tls=False, server_name=None,
                 connect_timeout=60.0, call_timeout=30.0):
        self.token = token if token is not None else os.environ.get("PACER_TOKEN", "")
        if not self.token:
            raise ValueError("a token is required (token= or $PACER_TOKEN)")
        # What pacer run hands each copy of a script (launch/run.go), as
        # torchrun hands MASTER_ADDR and RANK: the same script runs under
        # it and by hand.
        coordinator, worker_id = from_env(coordinator, worker_id)
        self.coordinator = coordinator
        self.tls = None
        if tls_ca or tls:
            self.tls = ssl.create_default_context(cafile=tls_ca) if tls_ca else ssl.create_default_context()
        self.server_name = server_name
        self.call_timeout = call_timeout
        self.id = worker_id
        # Where this process stands, sent with every control Hello (live/auth.go workerState).
        self.inc = random.getrandbits(63) | 1
        self.seq = 0
        self.acked = 0
        self.gate_clock = 0
        self.held = False
        self.started = time.monotonic()
        self.done = False
        self._released = False
        self._ctl_lock = threading.Lock()
        self.ctl = None
        self._ctl_since = 0.0  # when self.ctl was dialled
        self._redials = _Redials()
        self.links = []
        self._in_pull = False  # partial-pull mode: inside a pull (a lost push may be pushed again)
        self._pull_first = False  # ... the first after a (re)join: the last push predates it
        self.wait_s = 0.0   # seconds held: pushing, at the gate, pulling
        self.busy_s = 0.0   # seconds computing
        self.iter_s = 0.0   # the last iteration's compute time
        self.pushes = 0
        self.dropped = 0
        self.stale_pulls = 0  # PSP: iterations computed with some block not fresh
        self._dial_control(connect_timeout)
        self.job = Job(self.info["job"])
        self.puller = Puller(self.job)
        if len(self.info["shard_addrs"]) != self.job.shards:
            raise JobError("coordinator sent %d shard addresses for %d shards"
                           % (len(self.info["shard_addrs"]), self.job.shards))
        self.clock = self.info["clock"]
        self.first = True
        self._hb_stop = threading.Event()
        self._hb = threading.Thread(target=self._heartbeats, name="pacer-heartbeats", daemon=True)
        self._hb.start()

    # -- control connection

    def _state(self):
        st = {"inc": self.inc, "seq": self.seq, "acked": self.acked, "clock": self.gate_clock,
              "held": self.held, "age_us": int((time.monotonic() - self.started) * 1e6)}
        return {k: v for k, v in st.items() if v}  # omitempty, as the Go worker sends it

    def _on_control(self, f):
        if f.type == wire.RELEASE:
            self._released = True
        elif f.type == wire.SHUTDOWN:
            self.done = True

    def _dial_control(self, give_up):
        def make():
            return wire.Conn(self.coordinator, self.token, "control", worker=self.id, meta=self._state(),
                             tls=self.tls, server_name=self.server_name, timeout=self.call_timeout,
                             on_notify=self._on_control)
        try:
            c = wire.dial_retry(make, give_up, "coordinator %s" % self.coordinator)
        except wire.RemoteError as e:
            if e.code == wire.CODE_SHUTTING_DOWN:
                raise JobDone() from None
            raise
        info = c.welcome.json()
        if self.ctl is not None:
            # A coordinator restarted with other job flags: this worker's
            # model and data are the job it joined.
            if info.get("job") != self.info.get("job"):
                c.close()
                raise JobError("coordinator %s now runs another job than the one worker %d joined"
                               % (self.coordinator, self.id))
            self.ctl.close()
            if info["id"] != self.id:
                # A redial asks for its own id and is given another only
                # when it was a join's, removed, and went to another join
                # meanwhile (live/worker.go): the worker goes on as a join
                # under the new one, from a full pull. The shards know its
                # data connections under the old id, which another process
                # has now: each link redials under the new one at its next
                # request (_Link.current).
                log.warning("worker %d was given a fresh id, %d: its own went to another joining worker while it "
                            "was removed; it goes on under the new one from a full pull", self.id, info["id"])
                info["rejoined"] = True
        with self._ctl_lock:
            self.ctl = c
        self._ctl_since = time.monotonic()
        self.info, self.id = info, info["id"]

    def _redial(self):
        self._dial_control(None)

    def _redial_waiting(self):
        """Redials the coordinator for a worker whose control connection died
        while it waited (for a release or a pull), now and not at the
        next report: the heartbeats go into the dead connection until then,
        and a restarted coordinator removes a worker it does not hear from
        (live/worker/pull.go, redialWaiting). After a short delay (_Redials),
        longer while connections keep dying young. Raises _Rejoined when it
        had been removed meanwhile (first and clock are then the rejoin's)."""
        if self.done:
            raise JobDone()
        time.sleep(self._redials.next(time.monotonic() - self._ctl_since))
        self._redial()
        if self.info.get("rejoined"):
            log.warning("worker %d rejoined the job after being removed while it waited (clock %d)",
                        self.id, self.info["clock"])
            self.first, self.clock = True, self.info["clock"]
            self.gate_clock = self.info["clock"]
            raise _Rejoined()

    def _heartbeats(self):
        # Four beats per removal timeout and at least one a second (as the
        # Go worker: a process starved of CPU then loses at most a second of
        # its timeout to the beat it had not sent), also while the user's
        # loop computes.
        every = max(min(self.job.heartbeat_timeout / 4, 1.0), 0.01)
        while not self._hb_stop.wait(every):
            with self._ctl_lock:
                c = self.ctl
            try:
                # Not closed on a failed write: a Shutdown the coordinator
                # sent before it stopped is still to be read, and the main
                # thread's redials of an ended job's shards end on it.
                c.send(wire.HEARTBEAT, worker=self.id, keep_reading=True)
            except wire.ConnectionLost:
                pass  # the main thread redials when it reads the connection's end

    def report(self, loss=None):
        """Tells the gate about the push just made, with its mini-batch loss
        when given (summary.json's batch_loss averages the reported ones), and
        waits for its release."""
        payload = b"" if loss is None else struct.pack("<d", check_loss(loss))
        self._released = False
        delay = 0.05
        rejoined = False
        while True:
            try:
                r = self.ctl.call(wire.CLOCK, payload, worker=self.id, tag=self.seq, extra=int(self.wait_s * 1e6),
                                  offset=int(self.busy_s * 1e6), count=min(int(self.iter_s * 1e6), 2**32 - 1))
                break
            except wire.RemoteError as e:
                if e.code == wire.CODE_SHUTTING_DOWN:
                    raise JobDone() from None
                raise
            except wire.ConnectionLost:
                # Redial under the same id and resend: seq keeps the push from counting twice.
                time.sleep(delay)
                delay = min(2 * delay, 1.0)
                self._redial()
                rejoined = rejoined or self.info.get("rejoined", False)
        if r.flags & FLAG_REJOINED or rejoined:
            log.warning("worker %d rejoined the job after being removed (clock %d)", self.id, r.tag)
            self.first, self.clock = True, r.tag
        self.acked, self.gate_clock, self.held = self.seq, r.tag, True
        self._await_release()

    def _await_release(self):
        notice = wire.WaitNotice(lambda: "worker %d waits for the coordinator %s to release it (clock %d, %s): "
                                 "the paradigm holds it for other workers' pushes"
                                 % (self.id, self.coordinator, self.gate_clock, self.job.kind), time.monotonic())
        try:
            while not self._released:
                if self.done:
                    raise JobDone()
                notice.tick(time.monotonic())
                try:
                    f = self.ctl.read_frame(timeout=1.0)
                except wire.socket.timeout:
                    continue
                except wire.ConnectionLost:
                    # The coordinator re-sends the release of a worker that is not held when it reconnects.
                    try:
                        self._redial_waiting()
                    except _Rejoined:
                        return  # removed meanwhile: released, from a full pull
                    continue
                if f.req_id == 0:
                    self._on_control(f)
            if self.done:
                raise JobDone()
        finally:
            self.held = False

    # -- data connections

    def attach(self, params, grad):
        """Dials every shard for params and grad (float32, C-contiguous, the
        job's model's length) and pulls the weights into params."""
        for a, name in ((params, "params"), (grad, "grad")):
            if not isinstance(a, np.ndarray) or a.dtype != np.float32 or a.ndim != 1 or not a.flags.c_contiguous:
                raise TypeError("%s must be a contiguous 1-D float32 NumPy array" % name)
        if params.size != grad.size:
            raise ValueError("params has %d values, grad %d" % (params.size, grad.size))
        self.params, self.grad = params, grad
        n = params.size
        self.ranges = ranges(n, self.job.shards)
        self.read = [0] * self.job.shards
        meta = {"job": self.info["job"]}
        for i, addr in enumerate(self.info["shard_addrs"]):
            link = _Link(self, i, addr, meta)
            self.links.append(link)
            link.connect(give_up=60.0)
            lo, hi = self.ranges[i]
            if (link.lo, link.hi) != (lo, hi):
                raise JobError("a model of %d parameters puts shard %d at [%d, %d), but the shard holds [%d, %d) "
                               "of job model %r: the model is not the job's"
                               % (n, i, lo, hi, link.lo, link.hi, self.job.model))
        if self.info.get("held"):
            # Back under an id whose earlier process pushed and waits at the gate.
            self._await_release()
        self.pull()
        self._computing_from = time.monotonic()

    def pull(self):
        """Pulls every block into params as the paradigm says (its minimum
        versions), all shards at once."""
        if self.puller.partial < self.job.shards:
            return self._pull_partial()
        first = self.first
        mins = self.puller.min_versions(self.clock, self.read, first)
        self.first = False
        for i, link in enumerate(self.links):
            link.start_pull(mins[i])
        for i, link in enumerate(self.links):
            try:
                v = link.finish_pull(mins[i], first)
            except _Rejoined:
                # The later links' pulls are still in flight: their replies
                # are taken first, so each connection's next reply is the
                # new pull's.
                for later in self.links[i + 1:]:
                    later.drain_pull()
                return self.pull()
            self.read[i] = v
            self.puller.saw(v)
        self.clock = self.puller.next_clock(self.clock)

    def push(self):
        """Pushes grad, each shard its block, tagged with the clock."""
        if self.puller.partial < self.job.shards:
            return self._push_partial()
        for i, link in enumerate(self.links):
            lo, hi = self.ranges[i]
            link.start_push(self.grad[lo:hi], self.read[i], self.clock)
        for link in self.links:
            if link.finish_push():
                self.dropped += 1

    def pull_average(self, out=None):
        """θ̄, the weights' moving average the shards keep under the job's
        --ema, as one float32 vector of the model's length: each shard's
        block in shard order, as params holds θ. Written into out (a
        contiguous 1-D float32 array of that length) when given, else into a
        new array; returned. The shards' versions of the blocks are then in
        average_versions. params is not touched (under PSP, replies to pulls
        still in flight land in it first, as at the next step). Call it
        between steps, after attach(). Raises NoAverage, with the shard's
        message, when the job keeps no average, and JobDone when the job
        ended meanwhile (the shards stop soon after: step() then returns
        False too)."""
        if self.done:
            raise JobDone()
        if not self.links:
            raise RuntimeError("attach() first: the average comes over the shards' data connections")
        n = self.params.size
        if out is None:
            out = np.empty(n, dtype=np.float32)
        elif (not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.ndim != 1 or out.size != n
              or not out.flags.c_contiguous):
            raise TypeError("out must be a contiguous 1-D float32 NumPy array of %d values" % n)
        for link in self.links:
            link.settle()
        sent = [link.start_average() for link in self.links]
        versions, refused, lost = [None] * len(self.links), None, []
        for i, link in enumerate(self.links):
            # Every shard's reply is read, also after a refusal: each
            # connection's next reply must be its next request's.
            try:
                versions[i] = link.finish_average(out) if sent[i] else None
            except wire.RemoteError as e:
                refused = refused or (link.shard, e)
            if versions[i] is None and refused is None:
                lost.append(link)
        # A connection that broke: a shard restarting, or every shard
        # stopping because the job has just ended (the coordinator's
        # Shutdown says which). Redialled until AVERAGE_GIVE_UP, not for
        # ever as a step's pull is: the shards of an ended job never come back.
        deadline = time.monotonic() + AVERAGE_GIVE_UP
        told = {link.shard: wire.Unreachable(link.what()) for link in lost}
        while lost and refused is None:
            self._take_notices(0.05)
            if self.done:
                raise JobDone()
            link = lost[0]
            try:
                link.connect(give_up=1.0, unreachable=told[link.shard])
                v = link.finish_average(out) if link.start_average() else None
            except wire.ConnectionLost:
                v = None
            except wire.RemoteError as e:
                refused = (link.shard, e)
                break
            if v is not None:
                versions[link.shard] = v
                lost.pop(0)
            elif time.monotonic() > deadline:
                raise wire.ConnectionLost("shard %d: no average after %.0f s of redialling" % (link.shard, AVERAGE_GIVE_UP))
        if refused is not None:
            shard, e = refused
            if e.code == wire.CODE_BAD_REQUEST:
                raise NoAverage(e.message) from None
            if e.code == wire.CODE_PROTOCOL:
                raise JobError("shard %d does not answer a worker's average request (%s): a pacer server older "
                               "than this client" % (shard, e.message)) from None
            raise e
        self.average_versions = versions
        return out

    def exchange_buffers(self, floats, counters=()):
        """Sends this worker's model buffers to shard 0 and returns what the
        job's live workers hold together: (mean, counters, workers), the
        mean of every live worker's latest float buffers (this one's just
        sent among them) as a new float32 array, the integer buffers of the
        lowest live worker id (worker 0 while it runs) as a list, and how
        many workers the mean is of. floats: a 1-D float32 array (a
        BatchNorm's running means and variances), counters: integers (its
        num_batches_tracked); every worker of the job sends as many of
        each. Call it between steps, after attach(); the time it takes
        counts as waiting. Raises JobDone when the job has ended meanwhile,
        ValueError for buffers that are not finite or that do not fit in
        one of the connection's frames (before anything is sent), and
        JobError for a shard 0 that does not average buffers (a pacer
        older than this client)."""
        if self.done:
            raise JobDone()
        if not self.links:
            raise RuntimeError("attach() first: the buffers go over shard 0's data connection")
        floats = np.asarray(floats)
        if floats.dtype != np.float32 or floats.ndim != 1:
            raise TypeError("floats must be a 1-D float32 array, not %s %s" % (floats.dtype, floats.shape))
        if not np.isfinite(floats).all():
            raise ValueError("the model's buffers are not finite (NaN or Inf): shard 0 would refuse them")
        counters = [int(c) for c in counters]
        if floats.size == 0 and not counters:
            raise ValueError("no buffers to exchange")
        body = json.dumps({"op": "buffers", "buffers": base64.b64encode(floats.astype("<f4").tobytes()).decode("ascii"),
                           "counters": counters}, separators=(",", ":")).encode()
        link = self.links[0]
        # A worker's data connection may send its shard's block, or a
        # Hello's 64 KiB if larger (live/buffers.go).
        limit = max(wire.MAX_HELLO_PAYLOAD, 4 * (link.hi - link.lo))
        if len(body) > limit:
            raise ValueError("the model's buffers (%d floats, %d counters: %d bytes) exceed the %d bytes a frame to "
                             "shard 0 may hold (its block of %d floats)" % (floats.size, len(counters), len(body),
                                                                           limit, link.hi - link.lo))
        t0 = time.monotonic()
        link.settle()
        while True:
            if not link.current():
                link._redial()  # JobDone once the job has ended
            try:
                r = link.conn.reply(link.conn.request(wire.CONTROL, body, shard=0, worker=self.id))
                break
            except wire.ConnectionLost:
                # Sent again on a new connection: a worker's buffers replace
                # its previous ones, so a repeat changes nothing.
                link.conn = None
            except wire.RemoteError as e:
                if e.code == wire.CODE_BAD_REQUEST and "not expected on a worker connection" in e.message:
                    raise JobError("shard 0 does not average model buffers (%s): a pacer server older than this "
                                   "client; keep them per worker (pacer.torch.Worker(..., buffers=\"local\"))"
                                   % e.message) from None
                raise
        d = r.json()
        try:
            mean = np.frombuffer(base64.b64decode(d["buffers"]), dtype="<f4").astype(np.float32)
            got = [int(c) for c in d["counters"] or []]
            workers = int(d["workers"])
        except (KeyError, TypeError, ValueError) as e:
            raise wire.ProtocolError("shard 0's answer to buffers is not one: %s" % e) from None
        if mean.size != floats.size or len(got) != len(counters):
            raise wire.ProtocolError("shard 0 answered %d floats and %d counters for %d and %d"
                                     % (mean.size, len(got), floats.size, len(counters)))
        now = time.monotonic()
        self.wait_s += now - t0
        self._computing_from = now
        return mean, got, workers

    def _take_notices(self, wait):
        """Takes the coordinator's one-way frames already on the control
        connection (a Shutdown: the job has ended), waiting at most wait
        seconds for the first."""
        try:
            sock = self.ctl.sock
            while (isinstance(sock, ssl.SSLSocket) and sock.pending()) or select.select([sock], [], [], wait)[0]:
                f = self.ctl.read_frame()
                if f.req_id == 0:
                    self._on_control(f)
                wait = 0
        except (wire.ConnectionLost, OSError, ValueError):
            pass  # a closed connection: redialled at the next report

    def step(self, loss=None):
        """Push the gradient, report it (with its mini-batch loss, when
        given), wait for the release and pull: one iteration's
        communication. Returns False once the job has ended."""
        if self.done:
            return False
        if loss is not None:
            loss = check_loss(loss)  # before anything is sent
        t0 = time.monotonic()
        self.iter_s = t0 - self._computing_from
        self.busy_s += self.iter_s
        try:
            self.push()
            self.clock += 1
            self.pushes += 1
            self.seq += 1
            self.report(loss)
            self.pull()
        except JobDone:
            self.done = True
            self.close()
            return False
        now = time.monotonic()
        self.wait_s += now - t0
        self._computing_from = now
        return True

    # -- PSP's partial pulls: a pull may stay outstanding across iterations,
    # so each link keeps a queue of requests in flight (a connection's
    # replies come in order) and replies are taken whenever the worker
    # communicates. They land in params in place: the user's loop never
    # computes while this client reads.

    def _pull_partial(self):
        first = self.first
        mins = self.puller.min_versions(self.clock, self.read, first)
        self.first = False
        need = self.job.shards if first else self.puller.partial
        fresh = [False] * self.job.shards
        state = {"n": 0, "deadline": None}

        def response(i, version):
            self.puller.saw(version)
            if not fresh[i] and version >= mins[i]:
                fresh[i] = True
                state["n"] += 1
            elif not fresh[i]:
                self.links[i].pull_async(mins[i])  # left over from an earlier pull: ask again

        for i, link in enumerate(self.links):
            if first or not link.pulling():
                link.pull_async(mins[i])
        self._in_pull, self._pull_first = True, first
        try:
            self._await_partial(need, state, response)
        except _Rejoined:
            # A full pull again; replies still queued on the links are
            # taken in order by it (or by the next pull).
            return self._pull_partial()
        finally:
            self._in_pull = self._pull_first = False
        # A gradient pushed again during the pull (to a restarted shard)
        # is acknowledged before step() returns, as the Go worker drains
        # its pushes before computing: the user then writes the next
        # gradient into grad, and a push still queued when its connection
        # broke would be sent again under its old clock.
        self._drain_pushes()
        if state["n"] < self.job.shards:
            self.stale_pulls += 1
        self.clock = self.puller.next_clock(self.clock)

    def _await_partial(self, need, state, response):
        """Waits until the partial pull has its fresh blocks (and its grace)."""
        notice = wire.WaitNotice(lambda: "worker %d waits for %d fresh blocks of %d shards (%d so far)"
                                 % (self.id, need, self.job.shards, state["n"]), time.monotonic())
        while True:
            now = time.monotonic()
            notice.tick(now)
            if state["n"] >= need:
                if state["n"] == self.job.shards or self.puller.grace == 0:
                    break
                if state["deadline"] is None:
                    state["deadline"] = now + self.puller.grace
                if now >= state["deadline"]:
                    break
            self._wait_links(state["deadline"], response)

    def _push_partial(self):
        read = list(self.read)  # the versions the gradient was computed from
        for i, link in enumerate(self.links):
            lo, hi = self.ranges[i]
            link.push_async(self.grad[lo:hi], read[i], self.clock)
        self._drain_pushes()

    def _drain_pushes(self):
        for link in self.links:
            while link.pushing():
                link.take(late=self._late)

    def _late(self, i, version):
        # A reply to an earlier pull outside a pull: take() has refreshed the
        # copy for the next iteration; the puller counts only what answers
        # its own pull (as paradigm.Puller.Response is called).
        pass

    def _wait_links(self, deadline, response):
        """Takes whatever the links (and the control connection) have to
        give, waiting at most until deadline or the pending poll."""
        timeout = PENDING_POLL if deadline is None else max(0.0, min(PENDING_POLL, deadline - time.monotonic()))
        socks = {}
        for i, link in enumerate(self.links):
            # Pending links too: their ready notice arrives on the socket.
            if (link.fifo or link.pending_min is not None) and link.conn is not None and not link.conn.closed:
                socks[link.conn.sock] = i
        if self.ctl.closed:
            self._redial_waiting()
        ctl = self.ctl.sock
        watch = list(socks) + [ctl]
        if any(isinstance(s, ssl.SSLSocket) and s.pending() for s in watch):
            readable = watch
        else:
            readable, _, _ = select.select(watch, [], [], timeout)
        for sk in readable:
            if sk is ctl:
                try:
                    f = self.ctl.read_frame()
                    if f.req_id == 0:
                        self._on_control(f)
                except wire.ConnectionLost:
                    self._redial_waiting()  # JobDone if the job has ended
                if self.done:
                    raise JobDone()
            else:
                self.links[socks[sk]].take(late=response)
        now = time.monotonic()
        for link in self.links:
            # A pending pull asks again on the shard's ready notice, or at the poll.
            if link.pending_min is not None and (link.ready or now - link.pending_at >= PENDING_POLL):
                link.pull_async(link.pending_min)

    def close(self):
        self._hb_stop.set()
        for link in self.links:
            link.close()
        with self._ctl_lock:
            if self.ctl is not None:
                self.ctl.close()


class _Link:
    """The data connection to one shard (live/worker/wlink.go), redialled when it
    breaks."""

    def __init__(self, client, shard, addr, meta):
        self.c, self.shard, self.addr, self.meta = client, shard, addr, meta
        self.conn = None
        self.id = client.id
        self.inc = 0
        self.held = 0
        self.ready = False
        self.pushed = 0  # the incarnation that acknowledged our last push
        self.last_push = None  # (block, read, clock) of that push
        self._rid = None
        self._op = None
        self.fifo = []  # partial-pull mode: (request id, kind, min version or push op) in flight, oldest first
        self.pending_min = None  # partial-pull mode: a pull answered "pending", to ask again
        self.pending_at = 0.0

    def _on_notify(self, f):
        if f.type == wire.PULL_RESP and f.flags & FLAG_READY:
            self.ready = True

    def what(self):
        return "shard %d at %s" % (self.shard, self.addr)

    def connect(self, give_up=None, unreachable=None):
        c = self.c
        self.id = c.id  # the id the shard knows this connection under
        def make():
            return wire.Conn(self.addr, c.token, "worker", worker=self.id, meta=self.meta, tls=c.tls,
                             server_name=c.server_name, timeout=c.call_timeout, on_notify=self._on_notify)
        self.conn = wire.dial_retry(make, give_up, self.what(), unreachable=unreachable)
        si = self.conn.welcome.json()
        self.lo, self.hi = si["lo"], si["hi"]
        restarted = self.inc != 0 and si["incarnation"] != self.inc
        self.inc = si["incarnation"]
        if restarted and self.held:
            # A restarted shard skips forward to the version this worker holds.
            log.warning("shard %d restarted (version %d, worker holds %d)", self.shard, si["version"], self.held)
            self.conn.send(wire.HEARTBEAT, shard=self.shard, worker=c.id, tag=self.held)

    def current(self):
        """Whether the connection is open and under the worker's id: after
        a fresh id (Client._dial_control) the shard knows it under the old
        one, which another process has, and refuses its requests."""
        if self.conn is not None and not self.conn.closed and self.id != self.c.id:
            log.info("shard %d: redialling under worker id %d (was %d)", self.shard, self.c.id, self.id)
            self.conn.close()
        return self.conn is not None and not self.conn.closed

    def _request(self, op):
        """Sends op (a function of the connection returning a request id),
        redialling first if the connection is gone or of another id."""
        self._op = op
        while True:
            if not self.current():
                self._redial()
            try:
                self._rid = op(self.conn)
                return
            except wire.ConnectionLost:
                self.conn = None

    def _redial(self):
        """Dials the shard again for as long as the job runs: a restarting
        shard comes back, but the shards of an ended job never do, so between
        attempts the coordinator's notices are read and a Shutdown ends the
        wait (JobDone) instead of a redial for ever."""
        told = wire.Unreachable(self.what())
        while True:
            self.c._take_notices(0)
            if self.c.done:
                raise JobDone()
            try:
                self.connect(give_up=1.0, unreachable=told)
                return
            except wire.ConnectionLost as e:
                log.info("shard %d: %s; redialling", self.shard, e)

    def _reply(self, into=None):
        # Whatever the request, nothing on this link is larger than the
        # block: a reply beyond it is refused before it is read.
        while True:
            try:
                return self.conn.reply(self._rid, into=into, max_floats=self.hi - self.lo)
            except wire.ConnectionLost as e:
                log.info("shard %d: connection lost (%s); redialling", self.shard, e)
                self.conn = None
                self._request(self._op)  # the request again, on the new connection

    def start_push(self, block, read, clock):
        c = self.c
        self.last_push = (block, read, clock)
        self._request(lambda conn: conn.request(wire.PUSH, floats=block, shard=self.shard, worker=c.id,
                                                tag=clock, extra=read))

    def finish_push(self):
        """Takes the push's acknowledgement; returns whether the shard dropped
        it. A push refused as unavailable (the shard's log failing, or this
        worker not yet in the membership it heard) changed nothing and is
        sent again, paced, until it is taken; one refused as non-finite (it
        would have made the weights NaN or infinite) is a dropped push, as
        in the Go worker (live/worker/wlink.go)."""
        pace, told = PUSH_RETRY_MIN, False
        notice = None
        while True:
            try:
                r = self._reply()
            except wire.RemoteError as e:
                if e.code == wire.CODE_NON_FINITE:
                    log.warning("shard %d refused a gradient that would have made its weights non-finite; "
                                "training goes on (%s)", self.shard, e.message)
                    return True
                if e.code != wire.CODE_UNAVAILABLE or self.last_push is None:
                    raise
                if not told:
                    log.warning("shard %d refuses pushes for now (%s); offering this one again until it is taken",
                                self.shard, e.message)
                    told = True
                    notice = wire.WaitNotice("shard %d still refuses worker %d's push (%s)"
                                             % (self.shard, self.c.id, e.message), time.monotonic())
                notice.tick(time.monotonic())
                time.sleep(pace)
                pace = min(2 * pace, PUSH_RETRY_MAX)
                if self.c.ctl.closed:
                    # Removed meanwhile: only the coordinator's word lets
                    # the push in (JobDone when the job has ended).
                    self.c._redial_waiting()
                self.start_push(*self.last_push)
                continue
            self.pushed = r.extra
            return bool(r.flags & FLAG_DROPPED)

    def start_pull(self, min_version):
        self.ready = False
        c = self.c
        self._request(lambda conn: conn.request(wire.PULL, shard=self.shard, worker=c.id, tag=self.held,
                                                extra=min_version))

    def finish_pull(self, min_version, first=False):
        c = self.c
        into = c.params[self.lo:self.hi]
        notice = wire.WaitNotice(lambda: "worker %d waits for shard %d at %s to reach version %d (the paradigm's "
                                 "minimum for its pull)" % (c.id, self.shard, self.addr, min_version), time.monotonic())
        while True:
            r = self._reply(into=into)
            if not r.flags & FLAG_PENDING:
                break
            notice.tick(time.monotonic())
            if not first and self.pushed and self.pushed != r.extra and self.last_push is not None:
                # The shard that took our last push has died: its successor
                # may never have seen it, and a synchronous round would
                # wait for it. The gradient is still in grad (step() has
                # not returned): push it again (live/worker/wlink.go, evRepush).
                log.warning("shard %d restarted after taking our push of clock %d: pushing it again",
                            self.shard, self.last_push[2])
                self.start_push(*self.last_push)
                self.finish_push()
            # Below the minimum: wait for the ready notice (or poll), then ask again.
            self._await_ready()
            self.start_pull(min_version)
        self._took(r, into)
        return r.tag

    def _took(self, r, into):
        """Holds a pull's answer r, read into into."""
        if r.payload is not None:
            if r.count != into.size:
                self._refuse("shard %d sent %d floats for a block of %d" % (self.shard, r.count, into.size))
        self.held = r.tag
        # The reply pointed into the shard's snapshot: the acknowledgement releases it.
        try:
            self.conn.send(wire.HEARTBEAT, shard=self.shard, worker=self.c.id, tag=self.held)
        except wire.ConnectionLost:
            self.conn = None

    def _refuse(self, msg):
        """A reply that is not the block: logged (the job's only line about
        it, as the Go worker's) and raised."""
        log.error("%s: refused", msg)
        raise wire.ProtocolError(msg)

    def drain_pull(self):
        """Takes the reply to the pull in flight, answered or pending, when
        that pull is abandoned (Client.pull starting over after a rejoin)."""
        into = self.c.params[self.lo:self.hi]
        r = self._reply(into=into)
        if not r.flags & FLAG_PENDING:
            self._took(r, into)

    def start_average(self):
        """Asks for the shard's block of θ̄; False if the connection is gone
        (Client.pull_average redials)."""
        if self.conn is None or self.conn.closed:
            return False
        try:
            self._avg_rid = self.conn.request(wire.CONTROL, b'{"op":"average"}', shard=self.shard, worker=self.c.id)
            return True
        except wire.ConnectionLost:
            self.conn = None
            return False

    def finish_average(self, out):
        """Reads the shard's block of θ̄ into out[lo:hi] and returns its
        version; None if the connection broke."""
        into = out[self.lo:self.hi]
        try:
            r = self.conn.reply(self._avg_rid, into=into)
        except wire.ConnectionLost:
            self.conn = None
            return None
        if r.type != wire.PULL_RESP or r.payload is not None:
            n = r.count if r.type == wire.PULL_RESP else 0
            raise wire.ProtocolError("shard %d answered an average of %d floats with a %s of %d"
                                     % (self.shard, into.size, wire.TYPE_NAMES.get(r.type, r.type), n))
        return r.tag

    def settle(self):
        """Partial-pull mode: takes the replies still in flight, so that the
        next reply on the connection is the next request's."""
        while self.fifo:
            self.take(late=self.c._late)

    def _await_ready(self):
        deadline = time.monotonic() + PENDING_POLL
        while not self.ready:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self.c.ctl.closed:
                # Not a select on a closed socket (ValueError): the
                # coordinator is redialled while this pull waits.
                self.c._redial_waiting()
            ctl = self.c.ctl
            socks = [self.conn.sock, ctl.sock]
            if any(isinstance(s, ssl.SSLSocket) and s.pending() for s in socks):
                readable = socks
            else:
                readable, _, _ = select.select(socks, [], [], left)
            try:
                if self.conn.sock in readable:
                    f = self.conn.read_frame(max_floats=self.hi - self.lo)
                    if f.req_id == 0:
                        self._on_notify(f)
                if ctl.sock in readable:
                    try:
                        f = ctl.read_frame()
                    except wire.ConnectionLost:
                        self.c._redial_waiting()  # JobDone if the job has ended
                        continue
                    if f.req_id == 0:
                        self.c._on_control(f)
                    if self.c.done:
                        raise JobDone()
            except wire.ConnectionLost:
                return  # the shard's: the next request redials

    # -- partial-pull mode (Client._pull_partial)

    def pulling(self):
        return self.pending_min is not None or any(k == "pull" for _, k, _ in self.fifo)

    def pushing(self):
        return any(k == "push" for _, k, _ in self.fifo)

    def _send_async(self, kind, arg, send):
        while True:
            if not self.current():
                self._reconnect_async()
            try:
                self.fifo.append((send(self.conn), kind, arg))
                return
            except wire.ConnectionLost:
                self.conn = None

    def pull_async(self, min_version):
        self.ready, self.pending_min = False, None
        c = self.c
        self._send_async("pull", min_version, lambda conn: conn.request(
            wire.PULL, shard=self.shard, worker=c.id, tag=self.held, extra=min_version))

    def push_async(self, block, read, clock):
        c = self.c
        op = (block, read, clock)
        self.last_push = op
        self._send_async("push", op, lambda conn: conn.request(
            wire.PUSH, floats=block, shard=self.shard, worker=c.id, tag=clock, extra=read))

    def _reconnect_async(self):
        """A new connection: pushes in flight are sent again (a lost ack
        may mean a lost push), pulls in flight are asked again. Dialled as
        _redial dials, until the coordinator's Shutdown (JobDone): a push
        whose acknowledgement step() drains would otherwise redial the
        shards of an ended job for ever."""
        self._redial()
        old, self.fifo = self.fifo, []
        for _, kind, arg in old:
            if kind == "push":
                self.push_async(*arg)
            else:
                self.pull_async(arg)

    def take(self, late):
        """Reads one frame of this link and applies it: a pull reply lands in
        params (then late(shard, version)), a push ack ends the push."""
        c = self.c
        into = c.params[self.lo:self.hi]
        try:
            f = self.conn.read_frame(into=into if self.fifo and self.fifo[0][1] == "pull" else None,
                                     max_floats=self.hi - self.lo)
        except wire.ConnectionLost as e:
            log.info("shard %d: connection lost (%s); redialling", self.shard, e)
            self.conn = None
            self._reconnect_async()
            return
        if f.req_id == 0:
            self._on_notify(f)
            return
        if not self.fifo or f.req_id != self.fifo[0][0]:
            self.conn.close()
            raise wire.ProtocolError("shard %d: reply to request %d out of order" % (self.shard, f.req_id))
        _, kind, arg = self.fifo.pop(0)
        if f.type == wire.ERROR:
            msg = bytes(f.payload).decode("utf-8", "replace")
            if kind == "push" and f.extra == wire.CODE_NON_FINITE:
                log.warning("shard %d refused a gradient that would have made its weights non-finite; "
                            "training goes on (%s)", self.shard, msg)
                c.dropped += 1
                return
            if kind == "push" and f.extra == wire.CODE_UNAVAILABLE:
                # As finish_push: nothing changed, so the same push again.
                log.warning("shard %d refuses pushes for now (%s); offering this one again", self.shard, msg)
                time.sleep(PUSH_RETRY_MIN)
                self.push_async(*arg)
                return
            raise wire.RemoteError(f.extra, msg)
        if kind == "push":
            self.pushed = f.extra
            if f.flags & FLAG_DROPPED:
                c.dropped += 1
            return
        if f.flags & FLAG_PENDING:
            if (c._in_pull and not c._pull_first and not self.pushing() and self.pushed
                    and self.pushed != f.extra and self.last_push is not None):
                # As finish_pull: the shard that took our last push has died
                # and its successor may never have seen it; a round that
                # needs every worker's gradient would wait for it for ever.
                # Only inside a pull, with that push acknowledged: the block
                # is then still in grad, and no newer push is on its way.
                # Not in the first pull after a (re)join: the push was made
                # before the removal, under a clock the rejoin replaced.
                log.warning("shard %d restarted after taking our push of clock %d: pushing it again",
                            self.shard, self.last_push[2])
                self.pushed = f.extra
                # A copy: grad is the user's again once step() returns.
                block, read, clock = self.last_push
                self.push_async(block.copy(), read, clock)
            self.pending_min, self.pending_at = arg, time.monotonic()
            return
        if f.payload is not None:
            self._refuse("shard %d sent %d floats for a block of %d" % (self.shard, f.count, into.size))
        self.held = f.tag
        c.read[self.shard] = f.tag
        try:
            self.conn.send(wire.HEARTBEAT, shard=self.shard, worker=c.id, tag=self.held)
        except wire.ConnectionLost:
            self.conn = None
        late(self.shard, f.tag)

    def close(self):
        if self.conn is not None:
            self.conn.close()
