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
from .client import Client, Job, JobDone, JobError, NoAverage, ranges  # noqa: F401
from .wire import ConnectionLost, ProtocolError, RemoteError  # noqa: F401
