"""The IDX data sets pacer reads (Fashion-MNIST, MNIST) as NumPy arrays:
pixels/255 as float32, labels as int64, exactly as pacer's Go side reads
them (data/idx.go)."""
import gzip
import os

import numpy as np

DEFAULT_DIRS = ("/usr/share/datasets/fashion-mnist",)


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
