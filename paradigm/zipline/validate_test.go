package zipline

import (
	"errors"
	"math"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		times [][]float64
		want  error
	}{
		{"valid with ties", [][]float64{{1, 1, 2}, {0}}, nil},
		{"no workers", nil, ErrNoWorkers},
		{"empty list", [][]float64{{1}, {}}, ErrEmptyList},
		{"NaN", [][]float64{{1, math.NaN()}}, ErrNotFinite},
		{"+Inf", [][]float64{{math.Inf(1)}}, ErrNotFinite},
		{"-Inf", [][]float64{{math.Inf(-1), 0}}, ErrNotFinite},
		{"unsorted", [][]float64{{1, 2}, {3, 2.5}}, ErrUnsorted},
	}
	for _, c := range cases {
		err := Validate(c.times)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: Validate = %v, want %v", c.name, err, c.want)
		}
	}
	// The message names the offender.
	if err := Validate([][]float64{{1, 2}, {3, 2.5}}); err.Error() != "zipline: times not ascending: worker 1 index 1 value 2.5 after 3" {
		t.Errorf("message %q does not name worker 1 index 1", err)
	}
}

// The paper's prediction e_i^p = T_b + i·I_p, i = 1..R.
func TestPredict(t *testing.T) {
	got := Predict(nil, 10, []float64{1, 0.5, 0}, 3)
	want := [][]float64{{11, 12, 13}, {10.5, 11, 11.5}, {10, 10, 10}}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for p := range want {
		if len(got[p]) != 3 {
			t.Fatalf("row %d: len %d, want 3", p, len(got[p]))
		}
		for i := range want[p] {
			if got[p][i] != want[p][i] {
				t.Fatalf("e_%d^%d = %v, want %v", i+1, p, got[p][i], want[p][i])
			}
		}
	}
	if err := Validate(got); err != nil {
		t.Fatalf("Predict output invalid: %v", err)
	}
	// Multiplying, not accumulating: the 1000th prediction is exact.
	row := Predict(nil, 0, []float64{0.1}, 1000)[0]
	if row[999] != 1000*0.1 {
		t.Fatalf("e_1000 = %v, want %v", row[999], 1000*0.1)
	}
}

func TestPredictReusesDst(t *testing.T) {
	dst := Predict(nil, 0, []float64{1, 2, 3}, 5)
	first := &dst[0][0]
	// Fewer workers and a shorter R fit in place.
	out := Predict(dst, 1, []float64{4, 5}, 2)
	if len(out) != 2 || len(out[0]) != 2 || &out[0][0] != first || out[1][1] != 11 {
		t.Fatalf("Predict did not reuse dst in place: %v", out)
	}
	// Growing back keeps the rows' storage (cap was retained).
	out = Predict(out, 0, []float64{1, 1, 1}, 5)
	if &out[0][0] != first || len(out[2]) != 5 || out[2][4] != 5 {
		t.Fatalf("Predict did not reuse rows when growing back: %v", out)
	}
	// More workers and a longer R than dst holds still work.
	out = Predict(out, 0, []float64{1, 1, 1, 2}, 7)
	if len(out) != 4 || len(out[3]) != 7 || out[3][6] != 14 {
		t.Fatalf("Predict grew wrongly: %v", out)
	}
	if len(Predict(nil, 0, []float64{1}, 0)[0]) != 0 {
		t.Fatal("R = 0 should give empty rows")
	}
}
