package nn

import "testing"

// The products counted layer by layer by hand: a first layer has no input
// gradient, every later one has forward, weight and input gradient passes.
func TestStepFLOPs(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Shape
		macs int64 // multiply-adds per sample
	}{
		// 784·256 (2 passes) + 256·128 + 128·10 (3 each).
		{"mlp", Image28, 2*784*256 + 3*(256*128+128*10)},
		// conv 5×5×1→32 on 24×24 outputs (2 passes), conv 5×5×32→64 on
		// 8×8 (3), dense 4·4·64→128 and 128→10 (3 each).
		{"cnn", Image28, 2*24*24*25*32 + 3*(8*8*800*64+1024*128+128*10)},
	} {
		m, err := New(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := StepFLOPs(m, 64)
		if want := 2*64*c.macs + 2*int64(m.NumParams()); err != nil || got != want {
			t.Errorf("%s: StepFLOPs = %d, %v; want %d", c.name, got, err, want)
		}
	}
}
