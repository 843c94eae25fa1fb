package kernel

import (
	"math/rand/v2"
	"testing"
)

func TestMaxPool2Row(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for _, c := range []int{1, 3, 8, 16, 24, 32, 64} {
			for _, ow := range []int{0, 1, 2, 5} {
				// Integer values from a small range make ties common.
				r0, ok0 := guarded(r, 2*ow*c+r.IntN(2)*c, r.IntN(4), true)
				r1, ok1 := guarded(r, 2*ow*c, r.IntN(4), true)
				y, oky := guarded(r, ow*c, r.IntN(4), true)
				dy, _ := guarded(r, ow*c, 0, false)
				MaxPool2Row(y, r0, r1, ow, c)
				dx0, okd0 := guarded(r, 2*ow*c, r.IntN(4), true)
				dx1, okd1 := guarded(r, 2*ow*c, r.IntN(4), true)
				MaxPool2RowBackward(dx0, dx1, r0, r1, y, dy, ow, c)
				for ox := 0; ox < ow; ox++ {
					for ch := 0; ch < c; ch++ {
						at := []int{2*ox*c + ch, (2*ox+1)*c + ch}
						win := []float32{r0[at[0]], r0[at[1]], r1[at[0]], r1[at[1]]}
						best := 0
						for q := 1; q < 4; q++ {
							if win[q] > win[best] {
								best = q
							}
						}
						if y[ox*c+ch] != win[best] {
							t.Fatalf("c=%d ow=%d: y[%d] = %v, want %v", c, ow, ox*c+ch, y[ox*c+ch], win[best])
						}
						got := []float32{dx0[at[0]], dx0[at[1]], dx1[at[0]], dx1[at[1]]}
						for q := range got {
							want := float32(0)
							if q == best {
								want = dy[ox*c+ch]
							}
							if got[q] != want {
								t.Fatalf("c=%d ow=%d ch=%d: gradient %v for window %v, want it at %d", c, ow, ch, got, win, best)
							}
						}
					}
				}
				if !ok0() || !ok1() || !oky() || !okd0() || !okd1() {
					t.Fatalf("c=%d ow=%d: guard overwritten", c, ow)
				}
			}
		}
	})
}

func TestMaxPool2RowPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("short output did not panic")
		}
	}()
	MaxPool2Row(make([]float32, 3), make([]float32, 8), make([]float32, 8), 2, 2)
}

func TestRelu(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		for _, n := range level1Lengths() {
			x, okx := guarded(r, n, r.IntN(4), true) // integers: many exact zeros
			y, oky := guarded(r, n, r.IntN(4), false)
			dy, _ := guarded(r, n, r.IntN(4), false)
			dx, okd := guarded(r, n, r.IntN(4), false)
			ReluTo(y, x)
			ReluBackwardTo(dx, y, dy)
			for i, v := range x {
				want, g := float32(0), float32(0)
				if v > 0 {
					want, g = v, dy[i]
				}
				if y[i] != want || dx[i] != g {
					t.Fatalf("n=%d i=%d: relu(%v) = %v, grad %v; want %v, %v", n, i, v, y[i], dx[i], want, g)
				}
			}
			if !okx() || !oky() || !okd() {
				t.Fatalf("n=%d: guard overwritten", n)
			}
		}
	})
}
