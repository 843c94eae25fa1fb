"""The IDX data sets pacer reads (Fashion-MNIST, MNIST) as NumPy arrays:
pixels/255 as float32, labels as int64, exactly as pacer's Go side reads
them (data/idx.go); --normalize mean's per-channel mean, the same bits
as the Go side's (data/normalize.go); and a worker's training set and
mini-batches under the job's --train-limit, --normalize and --sampling
(training_set, batches, OwnShare), for every PyTorch worker (python/torch_worker.py,
examples/resnet_fashion.py)."""
import gzip
import os

import numpy as np

from . import batches as gobatches

DEFAULT_DIRS = ("/usr/share/datasets/fashion-mnist",)

# The data sets load reads (pacer's --dataset names) and their images'
# channels (Go's data.ImageOf): --normalize mean takes one mean a channel.
CHANNELS = {"fashion-mnist": 1, "mnist": 1}


def data_dir(explicit=None):
    """The directory holding the IDX files: explicit, $PACER_DATA, or
    Debian's dataset-fashion-mnist."""
    for d in (explicit, os.environ.get("PACER_DATA")) + DEFAULT_DIRS:
        if d and os.path.exists(os.path.join(d, "train-images-idx3-ubyte.gz")):
            return d
    raise FileNotFoundError("no Fashion-MNIST IDX files (train-images-idx3-ubyte.gz) in %s; "
                            "give data_dir or $PACER_DATA (scripts/setup installs Debian's dataset-fashion-mnist)"
                            % ", ".join(d for d in (explicit, os.environ.get("PACER_DATA")) + DEFAULT_DIRS if d))


def load_idx(path):
    with gzip.open(path, "rb") as f:
        b = f.read()
    if len(b) < 4 or b[0] or b[1] or b[2] != 8:
        raise ValueError("%s: not an IDX file of unsigned bytes" % path)
    ndim = b[3]
    dims = [int.from_bytes(b[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    a = np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim)
    if a.size != int(np.prod(dims)):
        raise ValueError("%s: %d values for shape %s" % (path, a.size, dims))
    return a.reshape(dims)


def load(split="train", directory=None, limit=0):
    """(x, y): x float32 (N, 784) in [0, 1], y int64 (N,)."""
    d = data_dir(directory)
    pre = "train" if split == "train" else "t10k"
    x = load_idx(os.path.join(d, pre + "-images-idx3-ubyte.gz"))
    y = load_idx(os.path.join(d, pre + "-labels-idx1-ubyte.gz")).astype(np.int64)
    x = x.reshape(x.shape[0], -1).astype(np.float32) / np.float32(255)
    if limit > 0:
        x, y = x[:limit], y[:limit]
    return x, y


# Elements per chunk of seq_sum: bounds its float64 temporary (8 MB).
_SEQ_CHUNK = 1 << 20


def seq_sum(a):
    """The float64 sum of a's elements (C order) added one after another,
    ((a0 + a1) + a2) + ..., as a Go loop does: np.sum adds pairwise, which
    rounds differently. np.cumsum is sequential; each chunk starts from the
    previous chunks' sum, so the order is the loop's throughout."""
    a = np.asarray(a).reshape(-1)
    total = 0.0
    for i in range(0, a.size, _SEQ_CHUNK):
        part = np.empty(min(_SEQ_CHUNK, a.size - i) + 1, dtype=np.float64)
        part[0] = total
        part[1:] = a[i:i + _SEQ_CHUNK]
        total = float(np.cumsum(part)[-1])
    return total


def channel_mean(x, channels=1):
    """--normalize mean's per-channel mean of the training images x (N rows
    of features, each sample's channels one after the other), the same bits
    as Go's data.ChannelMean: channel c's float64 sum runs sample by sample,
    feature by feature, then is divided by its count, so every process
    holding the same files and --train-limit gets the same mean (it does not
    travel with the job)."""
    x = np.asarray(x)
    if x.ndim != 2 or channels < 1 or x.shape[1] % channels:
        raise ValueError("%s features do not split into %d channels" % (x.shape[1:], channels))
    if x.shape[0] == 0:
        raise ValueError("the set is empty: it has no mean")
    n, per = x.shape[0], x.shape[1] // channels
    by = x.reshape(n, channels, per)
    return [seq_sum(by[:, c, :]) / float(n * per) for c in range(channels)]


def subtract_mean(x, mean):
    """A copy of x with mean[c] subtracted from every feature of channel c,
    as Go's Set.SubtractMean: in float64, rounded to float32."""
    x = np.asarray(x, dtype=np.float32)
    k = len(mean)
    if x.ndim != 2 or k < 1 or x.shape[1] % k:
        raise ValueError("%s features do not split into %d channels" % (x.shape[1:], k))
    per = x.shape[1] // k
    m = np.repeat(np.asarray(mean, dtype=np.float64), per)
    out = np.empty_like(x)
    step = max(1, _SEQ_CHUNK // max(1, x.shape[1]))
    for i in range(0, x.shape[0], step):  # row blocks: a float64 copy of the whole set would be 8 bytes a feature
        out[i:i + step] = x[i:i + step].astype(np.float64) - m
    return out


def batches(job, worker_id, n):
    """The worker's mini-batches of the n training samples, as index arrays,
    epoch after epoch: (epoch, indices). They are the batches a Go worker of
    the same job and id draws, bit for bit (pacer.batches computes Go's
    generator): its samples are its shard (every K-th from worker_id mod K
    on) or, with --sampling global, the whole set; each epoch is a fresh
    permutation of them drawn from (job seed, worker_id mod K, epoch), cut
    into batches of the job's --batch with the last one short, as the Go
    worker's batcher (data.Batcher) cuts them. Fewer samples than workers
    is refused (ValueError), as the Go worker refuses it."""
    wid = worker_id % job.workers
    for epoch, _, idx in gobatches.batches(n, job.workers, wid, job.batch, job.seed, job.sampling == "global"):
        yield epoch, np.array(idx, dtype=np.int64)


class OwnShare:
    """Counts how many of the samples a worker draws are its own shard's
    (every K-th sample from its id mod K on): share is 1 under shard
    sampling, about 1/K under --sampling global (the JSON lines' own_shard)."""

    def __init__(self, job, worker_id):
        self.workers, self.wid = job.workers, worker_id % job.workers
        self.drawn = self.own = 0

    def add(self, idx):
        """Counts a batch's sample indices (an integer array)."""
        idx = np.asarray(idx)
        self.drawn += idx.size
        self.own += int(np.count_nonzero(idx % self.workers == self.wid))

    @property
    def share(self):
        """The share so far, rounded to 4 places (0 before any sample)."""
        return round(self.own / max(self.drawn, 1), 4)


def training_set(job, x, y):
    """The training set as the job's workers see it: cut to --train-limit
    and, with --normalize mean, centred by the cut set's per-channel mean
    (the same bits as every Go process's, so the workers train on what shard
    0 evaluates). Returns x, y and the mean (None without normalization)."""
    if job.train_limit:
        x, y = x[:job.train_limit], y[:job.train_limit]
    mean = None
    if job.normalize == "mean":
        if job.dataset not in CHANNELS:
            raise ValueError("--normalize mean of %s: only the IDX sets (%s) are read here"
                             % (job.dataset, ", ".join(sorted(CHANNELS))))
        mean = channel_mean(x, CHANNELS[job.dataset])
        x = subtract_mean(x, mean)
    return x, y, mean
