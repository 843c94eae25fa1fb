package nn

import (
	"fmt"
	"math"
)

// Float64 reference implementations of every layer, written as the plain
// loops of the definitions (NHWC, same parameter layout as the layers).
// The gradient checks differentiate these numerically.

func refForward(l layer, p, x []float64, batch int) []float64 {
	switch l := l.(type) {
	case *dense:
		y := make([]float64, batch*l.out)
		for n := 0; n < batch; n++ {
			for o := 0; o < l.out; o++ {
				s := p[l.out*l.in+o]
				for i := 0; i < l.in; i++ {
					s += p[i*l.out+o] * x[n*l.in+i]
				}
				y[n*l.out+o] = s
			}
		}
		return y
	case *conv:
		y := make([]float64, batch*l.outSize())
		kk := l.patch()
		for n := 0; n < batch; n++ {
			for oy := 0; oy < l.oh; oy++ {
				for ox := 0; ox < l.ow; ox++ {
					for co := 0; co < l.cout; co++ {
						s := p[l.cout*kk+co]
						for ky := 0; ky < l.k; ky++ {
							for kx := 0; kx < l.k; kx++ {
								for ci := 0; ci < l.cin; ci++ {
									w := p[co*kk+(ky*l.k+kx)*l.cin+ci]
									s += w * x[n*l.inSize()+((oy+ky)*l.w+ox+kx)*l.cin+ci]
								}
							}
						}
						y[n*l.outSize()+(oy*l.ow+ox)*l.cout+co] = s
					}
				}
			}
		}
		return y
	case *maxPool2:
		oh, ow := l.h/2, l.w/2
		y := make([]float64, batch*l.outSize())
		for n := 0; n < batch; n++ {
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					for c := 0; c < l.c; c++ {
						m := math.Inf(-1)
						for dy := 0; dy < 2; dy++ {
							for dx := 0; dx < 2; dx++ {
								m = math.Max(m, x[n*l.inSize()+((2*oy+dy)*l.w+2*ox+dx)*l.c+c])
							}
						}
						y[n*l.outSize()+(oy*ow+ox)*l.c+c] = m
					}
				}
			}
		}
		return y
	case toNHWC:
		y := make([]float64, batch*l.outSize())
		for n := 0; n < batch; n++ {
			for c := 0; c < l.c; c++ {
				for r := 0; r < l.h; r++ {
					for q := 0; q < l.w; q++ {
						y[n*l.outSize()+(r*l.w+q)*l.c+c] = x[n*l.inSize()+(c*l.h+r)*l.w+q]
					}
				}
			}
		}
		return y
	case pad:
		y := make([]float64, batch*l.outSize())
		ow := l.w + 2*l.p
		for n := 0; n < batch; n++ {
			for r := 0; r < l.h; r++ {
				for q := 0; q < l.w; q++ {
					for c := 0; c < l.c; c++ {
						y[n*l.outSize()+((r+l.p)*ow+q+l.p)*l.c+c] = x[n*l.inSize()+(r*l.w+q)*l.c+c]
					}
				}
			}
		}
		return y
	case relu:
		y := make([]float64, batch*l.n)
		for i := range y {
			y[i] = math.Max(x[i], 0)
		}
		return y
	}
	panic(fmt.Sprintf("no reference for %T", l))
}

// refLoss is the mean softmax cross-entropy in float64.
func refLoss(logits []float64, y []uint8, classes, batch int) float64 {
	var total float64
	for n := 0; n < batch; n++ {
		row := logits[n*classes : (n+1)*classes]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - m)
		}
		total += math.Log(s) + m - row[y[n]]
	}
	return total / float64(batch)
}

// refModelLoss runs the whole seq in float64.
func refModelLoss(s *seq, p, x []float64, y []uint8, batch int) float64 {
	a := x
	for i, l := range s.layers {
		a = refForward(l, p[s.offs[i]:s.offs[i]+l.numParams()], a, batch)
	}
	return refLoss(a, y, s.classes, batch)
}

func to64(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}

// centralDiff is (f(v+h) - f(v-h)) / 2h for v = s[i], restoring s[i].
func centralDiff(s []float64, i int, f func() float64) float64 {
	const h = 1e-5
	v := s[i]
	s[i] = v + h
	up := f()
	s[i] = v - h
	down := f()
	s[i] = v
	return (up - down) / (2 * h)
}

// gradClose compares an analytic float32 gradient with a numeric float64
// one; float32 forward and backward passes carry relative errors near 1e-6
// per operation, so 1e-3 of the larger of 1 and the value is ample.
func gradClose(analytic float32, numeric float64) bool {
	return math.Abs(float64(analytic)-numeric) <= 1e-3*math.Max(1e-2, math.Abs(numeric))+1e-4
}
