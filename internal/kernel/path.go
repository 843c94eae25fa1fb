package kernel

import (
	"fmt"
	"os"
	"strings"
)

// Path names one set of kernel implementations.
type Path uint8

const (
	// PathGo is the pure-Go loops: the reference, and the only path of a
	// noasm build or a CPU without AVX2 and FMA.
	PathGo Path = iota
	// PathAVX2 is the AVX2/FMA assembly, with the 6×16 GEMM micro-kernel.
	PathAVX2
	// PathAVX512 is PathAVX2 with the 6×32 AVX-512 GEMM micro-kernel.
	PathAVX512
)

// EnvVar names the environment variable that forces a path: "go", "avx2"
// or "avx512". Unset or empty, the fastest path this CPU runs at full
// width is chosen (see DefaultPath).
const EnvVar = "PACER_KERNEL"

func (p Path) String() string {
	switch p {
	case PathGo:
		return "go"
	case PathAVX2:
		return "avx2"
	case PathAVX512:
		return "avx512"
	}
	return fmt.Sprintf("Path(%d)", p)
}

// nr returns the width of the path's GEMM register tile.
func (p Path) nr() int {
	if p == PathAVX512 {
		return 32
	}
	return 16
}

// path is the path in use; the tests switch it to run every available one.
var path, envErr = choosePath(os.Getenv(EnvVar))

// Active returns the path the kernels use in this process.
func Active() Path { return path }

// EnvErr reports a value of PACER_KERNEL that names no path, or one this
// build or CPU cannot run; the kernels then use DefaultPath. Commands check
// it at start so that a mistyped value is an error, not a silent default.
func EnvErr() error { return envErr }

// Available lists the paths this build and CPU can run, slowest first.
func Available() []Path {
	ps := []Path{PathGo}
	if hasAVX2 {
		ps = append(ps, PathAVX2)
	}
	if hasAVX512 {
		ps = append(ps, PathAVX512)
	}
	return ps
}

// DefaultPath is the path chosen when PACER_KERNEL is unset: AVX-512 where
// the CPU has it and runs 512-bit operations at full width, AVX2 where it
// has AVX2 and FMA, Go otherwise.
func DefaultPath() Path {
	switch {
	case hasAVX512 && !splitsZMM:
		return PathAVX512
	case hasAVX2:
		return PathAVX2
	}
	return PathGo
}

// ParsePath returns the path named s if this build and CPU can run it.
func ParsePath(s string) (Path, error) {
	var names []string
	for _, p := range Available() {
		if p.String() == s {
			return p, nil
		}
		names = append(names, p.String())
	}
	for p := PathGo; p <= PathAVX512; p++ {
		if p.String() == s {
			return 0, fmt.Errorf("kernel: %s=%s: this build or CPU cannot run the %s kernels (available: %s)",
				EnvVar, s, s, strings.Join(names, ", "))
		}
	}
	return 0, fmt.Errorf("kernel: %s=%q names no kernel path (want one of: %s)", EnvVar, s, strings.Join(names, ", "))
}

func choosePath(env string) (Path, error) {
	if env == "" {
		return DefaultPath(), nil
	}
	p, err := ParsePath(env)
	if err != nil {
		return DefaultPath(), err
	}
	return p, nil
}
