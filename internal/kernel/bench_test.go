package kernel

import (
	"fmt"
	"testing"
)

var sinkF32 float32

// naiveGemm is the triple loop the optimised kernel is compared against
// (NN, beta 0).
func naiveGemm(m, n, k int, a, b, c []float32) {
	for i := 0; i < m; i++ {
		row := c[i*n : i*n+n]
		clear(row)
		for p := 0; p < k; p++ {
			av := a[i*k+p]
			for j, bv := range b[p*n : p*n+n] {
				row[j] += av * bv
			}
		}
	}
}

// gemmShapes are the products of one MLP and CNN training step at batch 64
// (the CNN's second convolution per im2col chunk of 20 samples).
var gemmShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"mlp-fwd1-NN", false, false, 64, 256, 784},
	{"mlp-dW1-TN", true, false, 784, 256, 64},
	{"mlp-dX2-NT", false, true, 64, 256, 128},
	{"cnn-conv1-fwd-NT", false, true, 36864, 32, 25},
	{"cnn-conv1-dWT-TN", true, false, 25, 32, 36864},
	{"cnn-conv2-fwd-NT", false, true, 1280, 64, 800},
	{"cnn-conv2-dW-TN", true, false, 64, 800, 1280},
	{"cnn-conv2-dX-NN", false, false, 1280, 800, 64},
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range gemmShapes {
		ar, ac := s.m, s.k
		if s.transA {
			ar, ac = s.k, s.m
		}
		br, bc := s.k, s.n
		if s.transB {
			br, bc = s.n, s.k
		}
		a, bm, c := make([]float32, ar*ac), make([]float32, br*bc), make([]float32, s.m*s.n)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for i := range bm {
			bm[i] = float32(i%5) - 2
		}
		var w Workspace
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(4 * (len(a) + len(bm) + len(c))))
			for b.Loop() {
				w.Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, c, s.n)
			}
			flop := 2 * float64(s.m*s.n*s.k) * float64(b.N)
			b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			sinkF32 = c[0]
		})
	}
	b.Run("naive-mlp-fwd1-NN", func(b *testing.B) {
		m, n, k := 64, 256, 784
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for b.Loop() {
			naiveGemm(m, n, k, a, bm, c)
		}
		flop := 2 * float64(m*n*k) * float64(b.N)
		b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		sinkF32 = c[0]
	})
}

func BenchmarkAxpy(b *testing.B) {
	for _, n := range []int{1000, 235146} {
		x, y := make([]float32, n), make([]float32, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(12 * n))
			for b.Loop() {
				AxpyUnitary(0.5, x, y)
			}
			sinkF32 = y[0]
		})
		b.Run(fmt.Sprintf("naive/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(12 * n))
			for b.Loop() {
				for i, v := range x {
					y[i] += 0.5 * v
				}
			}
			sinkF32 = y[0]
		})
	}
}

// BenchmarkFirstNonFinite: the screen of a pushed piece (64K values, the
// size a shard checks as it arrives) and of a cached block, against the
// scalar loop.
func BenchmarkFirstNonFinite(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i)
		}
		b.Run(fmt.Sprintf("n=%d/naive", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for range b.N {
				sinkInt = scanNonFinite(x, 0)
			}
		})
		b.Run(fmt.Sprintf("n=%d/kernel", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for range b.N {
				sinkInt = FirstNonFinite(x)
			}
		})
	}
}

var sinkInt int
