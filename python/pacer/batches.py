"""A Go worker's mini-batch order, bit for bit, in pure Python.

A Go worker's batches (data.Batcher in data/batch.go) are its samples (its
shard, every K-th sample from its id on, or with --sampling global the whole
set) permuted afresh each epoch by math/rand/v2's Rand.Shuffle over a PCG
seeded with (mix64(seed ^ mix64(worker + 1)), epoch), then cut into batches
of the job's batch size with the epoch's last batch short. This module
computes the same generator, the same shuffle and the same cut, so a PyTorch
worker trains on exactly the batches a Go worker of its id would:

    PCG        Go's rand.PCG: a 128-bit LCG with the DXSM output
    uint64n    Go's Rand.uint64n: Lemire's multiply with rejection, as the
               64-bit (amd64) build runs it
    shuffle    Go's Rand.Shuffle (Fisher-Yates from the top)
    mix64      SplitMix64's finaliser, the batcher's seed mix
    epoch_order, batches   the batcher's order and cut

Python ints are unbounded, so every step masks to Go's word size.
python/testdata/batches.json, written by Go's TestBatchOrderFixture, holds
Go's own answers; python/test_pacer.py checks these against it.
"""

M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_TWO64 = 1 << 64

# Go's pcg.go constants: the 128-bit multiplier and increment as one int each.
_MUL = (2549297995355413924 << 64) | 4865540595714422341
_INC = (6364136223846793005 << 64) | 1442695040888963407
_CHEAP_MUL = 0xDA942042E4DD58B5


def _word(v, what):
    if not isinstance(v, int) or v < 0 or v > M64:
        raise ValueError("%s = %r: want an integer in [0, 2^64)" % (what, v))
    return v


def mix64(z):
    """SplitMix64's finaliser (data/batch.go's mix64)."""
    z = (_word(z, "mix64's input") + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class PCG:
    """Go's math/rand/v2 PCG: the state is one 128-bit int whose high word
    is Go's hi (seed1) and low word Go's lo (seed2)."""

    __slots__ = ("state",)

    def __init__(self, seed1=0, seed2=0):
        self.seed(seed1, seed2)

    def seed(self, seed1, seed2):
        self.state = (_word(seed1, "seed1") << 64) | _word(seed2, "seed2")

    def uint64(self):
        # state = state·mul + inc mod 2^128: Go's Mul64 and Add64 with
        # carry compute exactly this.
        s = (self.state * _MUL + _INC) & _M128
        self.state = s
        # DXSM on the new state's high word, multiplied by its low word | 1.
        hi = s >> 64
        hi ^= hi >> 32
        hi = (hi * _CHEAP_MUL) & M64
        hi ^= hi >> 48
        return (hi * ((s & M64) | 1)) & M64


def uint64n(src, n):
    """A number in [0, n) from src (a PCG) as Go's Rand.uint64n draws it on
    a 64-bit machine (its 32-bit path keeps the same outputs anyway): a
    power of two masks one draw; otherwise the high word of draw·n, drawing
    again while the low word falls below 2^64 mod n."""
    if n & (n - 1) == 0:
        return src.uint64() & (n - 1)
    p = src.uint64() * n
    if p & M64 < n:
        thresh = (_TWO64 - n) % n
        while p & M64 < thresh:
            p = src.uint64() * n
    return p >> 64


def shuffle(src, a):
    """Permutes the list a in place as Go's Rand.Shuffle(len(a), swap)."""
    for i in range(len(a) - 1, 0, -1):
        j = uint64n(src, i + 1)
        a[i], a[j] = a[j], a[i]


def check(n, workers, worker):
    """The Go batcher's refusals (data.Set.Shard): ValueError unless n ≥
    workers ≥ 1 and 0 ≤ worker < workers. Global sampling is refused the
    same way, as Go's NewBatcher takes the shard before it widens it."""
    if workers < 1:
        raise ValueError("workers = %d, must be ≥ 1" % workers)
    if not 0 <= worker < workers:
        raise ValueError("worker = %d, must be in [0, %d)" % (worker, workers))
    if n < workers:
        raise ValueError("%d training samples, fewer than %d workers" % (n, workers))


def samples(n, workers, worker, global_sampling):
    """The samples a worker draws from, ascending: its shard (every
    workers-th from worker on) or, global, all n."""
    check(n, workers, worker)
    return list(range(n)) if global_sampling else list(range(worker, n, workers))


def epoch_order(mine, seed, worker, epoch):
    """Epoch epoch's permutation of mine (the worker's samples, ascending)
    as data.Batcher.Seek draws it: a new list."""
    order = list(mine)
    src = PCG(mix64(_word(seed, "seed") ^ mix64(_word(worker + 1, "worker + 1"))), _word(epoch, "epoch"))
    shuffle(src, order)
    return order


def batches(n, workers, worker, batch, seed, global_sampling=False, epoch=0):
    """The Go worker's mini-batches, epoch after epoch from epoch on, without
    end: (epoch, index within the epoch, list of sample indices), cut as
    data.Batcher.Next cuts them without DropLast (the live worker's
    configuration): full batches, then the epoch's short rest, if any."""
    if batch < 1:
        raise ValueError("batch = %d, must be ≥ 1" % batch)
    mine = samples(n, workers, worker, global_sampling)
    while True:
        order = epoch_order(mine, seed, worker, epoch)
        for k, i in enumerate(range(0, len(order), batch)):
            yield epoch, k, order[i:i + batch]
        epoch += 1
