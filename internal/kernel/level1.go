package kernel

// Level-1 operations on float32 vectors. Each exported function checks its
// lengths once and hands the work to an implementation chosen at start-up
// (assembly when the CPU has AVX2 and FMA, the Go loops below otherwise).

// AxpyUnitary adds alpha·x to y element-wise:
//
//	for i := range x { y[i] += alpha * x[i] }
//
// It panics if len(y) < len(x).
func AxpyUnitary(alpha float32, x, y []float32) {
	if len(y) < len(x) {
		panic("kernel: AxpyUnitary: len(y) < len(x)")
	}
	if len(x) == 0 || alpha == 0 {
		return
	}
	axpy(alpha, x, y[:len(x)])
}

// ScalUnitary multiplies x by alpha in place:
//
//	for i := range x { x[i] *= alpha }
func ScalUnitary(alpha float32, x []float32) {
	if len(x) == 0 {
		return
	}
	scal(alpha, x)
}

// Sum returns the sum of x. The order of the additions differs between the
// assembly and the Go implementation, so results may differ in the last bits.
//
//	for i := range x { s += x[i] }
func Sum(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return sum(x)
}

// DotUnitary returns the inner product of x and y:
//
//	for i := range x { s += x[i] * y[i] }
//
// It panics if len(y) < len(x).
func DotUnitary(x, y []float32) float32 {
	if len(y) < len(x) {
		panic("kernel: DotUnitary: len(y) < len(x)")
	}
	if len(x) == 0 {
		return 0
	}
	return dot(x, y[:len(x)])
}

// The Go implementations. They are the reference the assembly is tested
// against and the fallback on CPUs without AVX2/FMA or under -tags noasm.
// Four independent accumulators in sum and dot shorten the dependency chain;
// the Go compiler does not vectorise, so this is as good as plain Go gets.

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scalGo(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

func sumGo(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
