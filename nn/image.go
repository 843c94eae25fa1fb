package nn

import (
	"fmt"
	"math/rand/v2"
)

// Shape is the shape of one input sample: C channels of H×W pixels. A
// model's input rows hold them channel-major, (c, y, x), as a PyTorch NCHW
// batch holds each sample and as the data sets store them (an IDX image is
// one channel; a CIFAR-10 record is its red, green and blue planes).
type Shape struct{ C, H, W int }

// Image28 is the shape of Fashion-MNIST and MNIST: one channel of 28×28.
var Image28 = Shape{C: 1, H: 28, W: 28}

// Size is the number of features per sample, C·H·W.
func (s Shape) Size() int { return s.C * s.H * s.W }

func (s Shape) String() string { return fmt.Sprintf("%d×%d×%d", s.C, s.H, s.W) }

// maxInput bounds a sample's features, so that a shape cannot make a model
// allocate more than a batch of real images needs (CIFAR-10 has 3,072).
const maxInput = 1 << 20

func (s Shape) check() error {
	if s.C < 1 || s.H < 1 || s.W < 1 || s.C > maxInput || s.H > maxInput || s.W > maxInput || s.Size() > maxInput {
		return fmt.Errorf("nn: input shape %v (channels×height×width): want each at least 1 and at most %d features in all", s, maxInput)
	}
	return nil
}

// toNHWC turns each sample from channel-major (c, y, x), the input's order,
// into the (y, x, c) order of the convolution layers. It is the first layer
// of a convolutional model on images of more than one channel (with one
// channel the two orders are the same and the layer is left out).
type toNHWC struct{ h, w, c int }

func (t toNHWC) inSize() int                    { return t.h * t.w * t.c }
func (t toNHWC) outSize() int                   { return t.inSize() }
func (t toNHWC) numParams() int                 { return 0 }
func (t toNHWC) init(_ []float32, _ *rand.Rand) {}

func (t toNHWC) forward(_, x, y []float32, batch int) {
	hw, n := t.h*t.w, t.inSize()
	for s := 0; s < batch; s++ {
		src, dst := x[s*n:(s+1)*n], y[s*n:(s+1)*n]
		for c := 0; c < t.c; c++ {
			plane := src[c*hw : (c+1)*hw]
			for p, v := range plane {
				dst[p*t.c+c] = v
			}
		}
	}
}

func (t toNHWC) backward(_, _, _, dy, dx, _ []float32, batch int) {
	if dx == nil {
		return
	}
	hw, n := t.h*t.w, t.inSize()
	for s := 0; s < batch; s++ {
		src, dst := dy[s*n:(s+1)*n], dx[s*n:(s+1)*n]
		for c := 0; c < t.c; c++ {
			plane := dst[c*hw : (c+1)*hw]
			for p := range plane {
				plane[p] = src[p*t.c+c]
			}
		}
	}
}

// pad surrounds each NHWC sample with p rows and columns of zeros: h×w×c
// becomes (h+2p)×(w+2p)×c. Followed by a valid convolution of a k×k filter
// with p = (k-1)/2, it is PyTorch's Conv2d(padding=p), "same" padding: the
// convolution keeps its input's height and width.
type pad struct{ h, w, c, p int }

func (l pad) inSize() int                    { return l.h * l.w * l.c }
func (l pad) outSize() int                   { return (l.h + 2*l.p) * (l.w + 2*l.p) * l.c }
func (l pad) numParams() int                 { return 0 }
func (l pad) init(_ []float32, _ *rand.Rand) {}

// forward writes every element of y: the border rows, and each inner row's
// border pixels, are cleared; the rest is copied.
func (l pad) forward(_, x, y []float32, batch int) {
	in, out := l.inSize(), l.outSize()
	row, orow, edge := l.w*l.c, (l.w+2*l.p)*l.c, l.p*l.c
	for s := 0; s < batch; s++ {
		src, dst := x[s*in:(s+1)*in], y[s*out:(s+1)*out]
		clear(dst[:l.p*orow])
		for r := 0; r < l.h; r++ {
			d := dst[(l.p+r)*orow : (l.p+r+1)*orow]
			clear(d[:edge])
			copy(d[edge:edge+row], src[r*row:(r+1)*row])
			clear(d[edge+row:])
		}
		clear(dst[(l.p+l.h)*orow:])
	}
}

// backward gives each input pixel the gradient of its copy; the border's
// gradient is dropped.
func (l pad) backward(_, _, _, dy, dx, _ []float32, batch int) {
	if dx == nil {
		return
	}
	in, out := l.inSize(), l.outSize()
	row, orow, edge := l.w*l.c, (l.w+2*l.p)*l.c, l.p*l.c
	for s := 0; s < batch; s++ {
		src, dst := dy[s*out:(s+1)*out], dx[s*in:(s+1)*in]
		for r := 0; r < l.h; r++ {
			copy(dst[r*row:(r+1)*row], src[(l.p+r)*orow+edge:])
		}
	}
}
