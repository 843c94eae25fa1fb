"""pacer's Python client: PyTorch (or any NumPy) workers for a live pacer
job. docs/python.md says how to use it.

    pacer.wire    the wire protocol (docs/protocol.md): frames, a connection
    pacer.client  a worker's side of a live job over a flat float32 vector
    pacer.torch   a torch.nn.Module's parameters as that vector (import it
                  explicitly: it needs PyTorch)
    pacer.models  pacer's MLP and CNN in PyTorch, in pacer's layout
    pacer.data    Fashion-MNIST / MNIST IDX files as NumPy arrays; a worker's
                  training set and mini-batches under the job's recipes
    pacer.batches a Go worker's mini-batch order, bit for bit (Go's PCG
                  and Rand.Shuffle in pure Python), for pacer.data
"""
import os as _os


def _version():
    """pacer's version: compare/VERSION in the repository this package runs
    from (PYTHONPATH=python), else what pip installed (the same file, read
    by python/setup.py at the install)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    src = _os.path.join(here, "..", "..", "compare", "VERSION")
    if _os.path.exists(_os.path.join(here, "..", "setup.py")) and _os.path.exists(src):
        with open(src) as f:
            return f.read().strip()
    from importlib import metadata
    try:
        return metadata.version("pacer-ps")
    except metadata.PackageNotFoundError:
        return "unknown"


__version__ = _version()

from .client import Client, Job, JobDone, JobError, NoAverage, ranges  # noqa: F401,E402
from .wire import ConnectionLost, ProtocolError, RemoteError  # noqa: F401,E402
