package kernel

// ReluTo writes max(x, 0) element-wise into dst:
//
//	for i := range x { dst[i] = max(x[i], 0) }
//
// It panics if len(dst) < len(x).
func ReluTo(dst, x []float32) {
	if len(dst) < len(x) {
		panic("kernel: ReluTo: len(dst) < len(x)")
	}
	relu(dst[:len(x)], x)
}

// ReluBackwardTo writes the gradient of ReLU given its output y and the
// output gradient dy, taking the derivative at 0 as 0:
//
//	for i := range y { if y[i] > 0 { dx[i] = dy[i] } else { dx[i] = 0 } }
//
// It panics if dx or dy is shorter than y.
func ReluBackwardTo(dx, y, dy []float32) {
	if len(dx) < len(y) || len(dy) < len(y) {
		panic("kernel: ReluBackwardTo: dx or dy shorter than y")
	}
	reluBackward(dx[:len(y)], y, dy[:len(y)])
}

func reluGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = max(v, 0)
	}
}

func reluBackwardGo(dx, y, dy []float32) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	for i, v := range y {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}
