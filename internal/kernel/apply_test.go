package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// refSub4 is Sub4's definition, one element at a time, each operation
// rounded to float32 (explicit conversions forbid fusing).
func refSub4(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	for i := range w {
		s := float32(b0 * g0[i])
		s = float32(s + float32(b1*g1[i]))
		s = float32(s + float32(b2*g2[i]))
		s = float32(s + float32(b3*g3[i]))
		w[i] = float32(float32(d*w[i]) - s)
	}
}

// TestSub4SameBits: every path gives the definition's bits exactly, for
// every tail length, unaligned starts, d = 1 and d ≠ 1, and special values
// (the apply's determinism across machines rests on it), and writes
// nothing outside w.
func TestSub4SameBits(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, n := range level1Lengths() {
			for _, d := range []float32{1, 0.9995} {
				w, wok := guarded(r, n, r.IntN(4), false)
				var g [4][]float32
				var gok [4]func() bool
				for k := range g {
					g[k], gok[k] = guarded(r, n, r.IntN(4), false)
				}
				if n > 5 { // an infinity, a NaN and a signed zero somewhere
					g[1][2], g[2][3], w[4] = float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
				}
				b := [4]float32{0.025, -0.0125, 3e-3, 1e-7}
				want := append([]float32(nil), w...)
				refSub4(want, g[0], g[1], g[2], g[3], b[0], b[1], b[2], b[3], d)
				Sub4(w, g[0], g[1], g[2], g[3], b[0], b[1], b[2], b[3], d)
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d d=%g: w[%d] = %v (%#x), want %v (%#x)", n, d, i, w[i], math.Float32bits(w[i]), want[i], math.Float32bits(want[i]))
					}
				}
				if !wok() || !gok[0]() || !gok[1]() || !gok[2]() || !gok[3]() {
					t.Fatalf("n=%d: guard overwritten", n)
				}
			}
		}
	})
}

func TestSub1SameBits(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range level1Lengths() {
			for _, d := range []float32{1, 0.9995} {
				w, wok := guarded(r, n, r.IntN(4), false)
				g, gok := guarded(r, n, r.IntN(4), false)
				want := append([]float32(nil), w...)
				for i := range want {
					want[i] = float32(float32(d*want[i]) - float32(-0.0125*g[i]))
				}
				Sub1(w, g, -0.0125, d)
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d d=%g: w[%d] = %v, want %v", n, d, i, w[i], want[i])
					}
				}
				if !wok() || !gok() {
					t.Fatalf("n=%d: guard overwritten", n)
				}
			}
		}
	})
}

func TestSubShortPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Sub4": func() { Sub4(make([]float32, 3), nil, nil, nil, nil, 1, 1, 1, 1, 1) },
		"Sub1": func() { Sub1(make([]float32, 3), make([]float32, 2), 1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short gradient did not panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkSub4 is the apply of four gradients to a shard's 10M floats
// (240 MB through memory a call) on the assembly and on the Go loop,
// alternating; ratio is Go's time over the active path's.
//
//	go test ./internal/kernel -run '^$' -bench Sub4 -benchtime 20x
func BenchmarkSub4(b *testing.B) {
	const n = 10 << 20
	var x [5][]float32
	for k := range x {
		x[k] = make([]float32, n)
		for i := range x[k] {
			x[k][i] = float32(i%13) * 1e-3
		}
	}
	saved := path
	defer func() { path = saved }()
	var tGo, tAsm time.Duration
	b.SetBytes(24 * n)
	for b.Loop() {
		for _, p := range []Path{PathGo, saved} {
			path = p
			t0 := time.Now()
			Sub4(x[0], x[1], x[2], x[3], x[4], 1e-4, 1e-4, 1e-4, 1e-4, 1)
			if dt := time.Since(t0); p == PathGo {
				tGo += dt
			} else {
				tAsm += dt
			}
		}
	}
	b.ReportMetric(float64(tGo)/float64(tAsm), "ratio")
	b.ReportMetric(24*n*float64(b.N)/tAsm.Seconds()/1e9, "GB/s")
}

func TestAcc4SameBits(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, n := range level1Lengths() {
			for _, first := range []bool{true, false} {
				u, uok := guarded(r, n, r.IntN(4), false)
				var g [4][]float32
				for k := range g {
					g[k], _ = guarded(r, n, r.IntN(4), false)
				}
				if n > 5 {
					g[3][1], u[5] = float32(math.Inf(-1)), float32(math.Copysign(0, -1))
				}
				a := [4]float32{0.25, 0.25, -0.5, 1e-3}
				want := append([]float32(nil), u...)
				for i := range want {
					s := float32(a[0] * g[0][i])
					s = float32(s + float32(a[1]*g[1][i]))
					s = float32(s + float32(a[2]*g[2][i]))
					s = float32(s + float32(a[3]*g[3][i]))
					if first {
						want[i] = s
					} else {
						want[i] = float32(want[i] + s)
					}
				}
				Acc4(u, g[0], g[1], g[2], g[3], a[0], a[1], a[2], a[3], first)
				for i := range u {
					if math.Float32bits(u[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d first=%v: u[%d] = %v, want %v", n, first, i, u[i], want[i])
					}
				}
				if !uok() {
					t.Fatalf("n=%d: guard overwritten", n)
				}
			}
		}
	})
}

func TestMomentumSameBits(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, n := range level1Lengths() {
			for _, wd := range []float32{0, 1e-4} {
				w, wok := guarded(r, n, r.IntN(4), false)
				v, vok := guarded(r, n, r.IntN(4), false)
				u, _ := guarded(r, n, r.IntN(4), false)
				if n > 5 {
					u[2], w[3] = float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1))
				}
				const lr, mu = float32(0.05), float32(0.9)
				ww, vv := append([]float32(nil), w...), append([]float32(nil), v...)
				for i := range ww {
					vi := float32(float32(mu*vv[i]) + float32(u[i]+float32(wd*ww[i])))
					vv[i] = vi
					ww[i] = float32(ww[i] - float32(lr*vi))
				}
				Momentum(w, v, u, lr, mu, wd)
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(ww[i]) || math.Float32bits(v[i]) != math.Float32bits(vv[i]) {
						t.Fatalf("n=%d wd=%g: w[%d], v[%d] = %v, %v, want %v, %v", n, wd, i, i, w[i], v[i], ww[i], vv[i])
					}
				}
				if !wok() || !vok() {
					t.Fatalf("n=%d: guard overwritten", n)
				}
			}
		}
	})
}
