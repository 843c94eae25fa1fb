package hugemem

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/kernel"
)

func TestFloatsZeroed(t *testing.T) {
	for _, n := range []int{0, 1, MinFloats - 1, MinFloats, 3*MinFloats + 5} {
		x := Floats(n)
		if len(x) != n {
			t.Fatalf("Floats(%d) has %d values", n, len(x))
		}
		for i, v := range x {
			if v != 0 {
				t.Fatalf("Floats(%d)[%d] = %g, want 0", n, i, v)
			}
		}
	}
}

// BenchmarkStream streams 160 MB blocks on ordinary pages and on huge
// pages, alternating, and reports ordinary ÷ huge time as ratio (above 1:
// huge pages are faster): read is the vectorised finite check of a pushed
// block (a pure read stream), axpy steps one block by
// another (y -= a·x: a read stream and a written one). The blocks are made
// and faulted in before timing.
//
//	go test ./internal/hugemem -run '^$' -bench Stream -benchtime 20x
func BenchmarkStream(b *testing.B) {
	const n = 40 << 20
	small := [2][]float32{make([]float32, n), make([]float32, n)}
	for _, x := range small {
		for i := 0; i < n; i += 1024 {
			x[i] = 1 // fault in on ordinary pages
		}
	}
	huge := [2][]float32{Floats(n), Floats(n)}
	for _, c := range []struct {
		name  string
		bytes int
		run   func(x [2][]float32)
	}{
		{"read", 4 * n, func(x [2][]float32) { kernel.FirstNonFinite(x[0]) }},
		{"axpy", 3 * 4 * n, func(x [2][]float32) { axpy(x[0], x[1], 1e-3) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var tSmall, tHuge time.Duration
			b.SetBytes(int64(c.bytes))
			for b.Loop() {
				t0 := time.Now()
				c.run(small)
				t1 := time.Now()
				c.run(huge)
				t2 := time.Now()
				tSmall, tHuge = tSmall+t1.Sub(t0), tHuge+t2.Sub(t1)
			}
			b.ReportMetric(float64(tSmall)/float64(tHuge), "ratio")
			b.ReportMetric(float64(c.bytes)*float64(b.N)/tSmall.Seconds()/1e9, "small_GB/s")
			b.ReportMetric(float64(c.bytes)*float64(b.N)/tHuge.Seconds()/1e9, "huge_GB/s")
		})
	}
}

// axpy is y -= a·x, unrolled by four as optim's kernels are.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		yy, xx := (*[4]float32)(y[i:]), (*[4]float32)(x[i:])
		yy[0] -= a * xx[0]
		yy[1] -= a * xx[1]
		yy[2] -= a * xx[2]
		yy[3] -= a * xx[3]
	}
	for ; i < len(y); i++ {
		y[i] -= a * x[i]
	}
}
