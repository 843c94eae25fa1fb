package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPathsAgree runs the GEMM shapes of a training step (and odd ones
// around the tile widths) on every available path. The assembly paths must
// give the same bits: each element of C is one lane summed over k in the
// same kc blocks with FMA, whatever the tile width. The Go path, without
// FMA, must agree within the documented tolerance, 1e-5·√k relative (see
// doc.go).
func TestPathsAgree(t *testing.T) {
	if err := EnvErr(); err != nil {
		t.Fatal(err)
	}
	saved := path
	defer func() { path = saved }()
	shapes := append([]struct {
		name           string
		transA, transB bool
		m, n, k        int
	}{
		{"odd-NN", false, false, 37, 65, 301},
		{"odd-TT", true, true, 50, 47, 260},
		{"odd-NT", false, true, 13, 31, 9},
		{"odd-TN", true, false, 300, 33, 70},
	}, gemmShapes...)
	r := rand.New(rand.NewPCG(21, 1))
	for _, s := range shapes {
		if testing.Short() && s.m*s.n*s.k > 1<<24 {
			continue
		}
		ar, ac := s.m, s.k
		if s.transA {
			ar, ac = s.k, s.m
		}
		br, bc := s.k, s.n
		if s.transB {
			br, bc = s.n, s.k
		}
		a, b := make([]float32, ar*ac), make([]float32, br*bc)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		c0 := make([]float32, s.m*s.n)
		for i := range c0 {
			c0[i] = float32(r.NormFloat64())
		}
		results := map[Path][]float32{}
		for _, p := range Available() {
			path = p
			var w Workspace
			c := append([]float32(nil), c0...)
			// beta = 1 and alpha ≠ 1 exercise the scaled, accumulating stores.
			w.Sgemm(s.transA, s.transB, s.m, s.n, s.k, -0.75, a, ac, b, bc, 1, c, s.n)
			results[p] = c
		}
		ref := results[PathGo]
		tol := 1e-5 * math.Sqrt(float64(s.k))
		for _, p := range Available() {
			got := results[p]
			for i := range got {
				if p != PathGo && results[PathAVX2] != nil && math.Float32bits(got[i]) != math.Float32bits(results[PathAVX2][i]) {
					t.Fatalf("%s: %s and avx2 differ at %d: %v, %v", s.name, p, i, got[i], results[PathAVX2][i])
				}
				if !closeTo(got[i], float64(ref[i]), tol) {
					t.Fatalf("%s: %s and go differ at %d beyond %.2g: %v, %v", s.name, p, i, tol, got[i], ref[i])
				}
			}
		}
	}
}

func TestParsePath(t *testing.T) {
	for _, p := range Available() {
		got, err := ParsePath(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePath(%q) = %v, %v", p.String(), got, err)
		}
		if got, err := choosePath(p.String()); err != nil || got != p {
			t.Errorf("choosePath(%q) = %v, %v", p.String(), got, err)
		}
	}
	for _, bad := range []string{"AVX2", "sse", "avx-512", " go"} {
		got, err := choosePath(bad)
		if err == nil || !strings.Contains(err.Error(), "names no kernel path") {
			t.Errorf("choosePath(%q): err = %v", bad, err)
		}
		if got != DefaultPath() {
			t.Errorf("choosePath(%q) = %v, want the default %v", bad, got, DefaultPath())
		}
	}
	if !hasAVX512 {
		if _, err := ParsePath("avx512"); err == nil || !strings.Contains(err.Error(), "cannot run") {
			t.Errorf("ParsePath(avx512) without AVX-512: err = %v", err)
		}
	}
	if got, err := choosePath(""); err != nil || got != DefaultPath() {
		t.Errorf("unset: %v, %v", got, err)
	}
	d := DefaultPath()
	if d == PathAVX512 && (!hasAVX512 || splitsZMM) || d == PathAVX2 && !hasAVX2 {
		t.Errorf("default path %v on a CPU with avx2=%v avx512=%v splitsZMM=%v", d, hasAVX2, hasAVX512, splitsZMM)
	}
	t.Logf("available %v, default %v, active %v", Available(), d, Active())
}
