// Package nn is pacer's worker compute: four image classifiers (the MLP and
// small CNN of torch_baseline.py, the DSSP/ElasticBSP papers' downsized
// AlexNet "alexnet-small" and the staleness-aware paper's CIFAR-10 network
// "cifar-net"; docs/models.md), each built for its data set's input shape,
// their forward and backward passes, and a deterministic initialisation,
// all on one flat float32 parameter vector.
//
// # Use
//
//	m, err := nn.New("cnn", nn.Image28) // nn.Shape{C: 3, H: 32, W: 32} for CIFAR-10
//	params := make([]float32, m.NumParams())
//	grad := make([]float32, m.NumParams())
//	m.Init(params, seed)
//	loss := m.Grad(params, grad, x, y, batch) // grad = mean gradient
//	acc := nn.Accuracy(m, params, testX, testY, 1000)
//
// x is batch×InputSize row-major float32 (pixel/255; each sample channel by
// channel, row by row, as PyTorch's NCHW), y the labels 0–9. The flat
// vector is the concatenation, layer by layer, of each layer's weights and
// then its bias, so a server shard can own any contiguous range of it and a
// worker can push and pull it in blocks; the optimizer (package optim) sees
// only flat vectors. A Model owns scratch buffers and is not safe for
// concurrent use: one per worker goroutine. Grad and Predict allocate only
// while their buffers grow to a larger batch than seen before. Wrong lengths
// and labels out of range panic with a message; CheckBatch returns the
// same diagnosis as an error for callers handling untrusted input.
//
// # Implementation notes
//
// Every layer processes the whole batch at once so that the heavy work is a
// few large matrix products (internal/kernel.Sgemm), which is what makes the
// worker competitive with PyTorch on one core:
//
//   - dense: y = x·W + b, dW = xᵀ·dy, dx = dy·Wᵀ, with W stored in×out
//     (the transpose of torch.nn.Linear's layout) so that the forward
//     product reads W in place; only the input gradient, never needed for
//     the first layer, transposes it.
//   - conv (valid, stride 1): activations are NHWC, filters stored
//     cout×(kh,kw,ci). The products are those of im2col (a row of k·k·cin
//     input values per output pixel), but the matrix is never written:
//     kernel.SgemmGather reads it from the input through offset tables of
//     windows and taps for y = col·Wᵀ + b (bias added in the stores) and
//     dWᵀ = colᵀ·dy, and kernel.SgemmScatterAdd adds dy·W onto dx through
//     the same tables as its tiles are stored (col2im without the dcol
//     matrix). The weight gradient sums the batch in the chunks and order
//     of the earlier materialised im2col (4 MiB chunks, last first), which
//     keeps its bits.
//   - max-pool 2×2 stores no argmax: backward finds the winner again by
//     comparing each window with the pooled value (first in row-major order
//     on ties), branch-free in the kernel.
//   - The loss layer folds 1/batch into the logit gradient, so every
//     gradient downstream is already a batch mean.
//   - A convolutional model on several channels starts with a transpose of
//     each sample from (c, y, x) to NHWC; a "same" convolution is a zero
//     padding layer then a valid one. Neither has parameters, and the
//     backward pass stops at the first layer that has (no input gradient
//     is computed for the first convolution behind them).
//
// The CNN applies each ReLU after, not before, its max-pool: the two orders
// compute the same function and gradient (max is monotone), and pooling
// first leaves the ReLU a quarter of the work. The 1024 features before the
// first dense layer are in (h, w, c) order rather than PyTorch's (c, h, w):
// a fixed permutation of that layer's inputs, which the network learns
// around; the models are the same up to relabelling parameters.
//
// Initialisation follows PyTorch's defaults for Linear and Conv2d: weights
// and biases uniform on ±1/√fan_in, drawn in layer order from a PCG
// generator seeded with the given seed, so a seed fixes the vector bit for
// bit everywhere.
//
// Tests check every layer's forward pass against plain float64 loops and its
// backward pass against central differences of those loops, the whole
// models likewise, that training lowers the loss on a synthetic problem, and
// that steady-state Grad allocates nothing. Run them with and without
// -tags noasm.
package nn
