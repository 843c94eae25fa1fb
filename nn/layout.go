package nn

import (
	"fmt"
	"strconv"
)

// Tensor is one named parameter array of a model in the exchange layout
// (docs/model-format.md): PyTorch's own names, shapes and element orders,
// so a torch.nn.Module with the same architecture loads the arrays as its
// state_dict unchanged.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32 // row-major (C order) over Shape
}

// Size is the number of elements Shape holds.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Tensors converts params (m's flat vector) into the exchange layout, in
// the model's order: for each layer with parameters, its weight then its
// bias, named convN.* and fcN.* (N counting that kind of layer from 1).
// A dense layer's weight is out×in (pacer stores in×out); a convolution's
// is cout×cin×k×k (pacer stores cout×k×k×cin); a dense layer that follows
// a convolution takes its inputs in PyTorch's flatten order of an NCHW
// activation (pacer's activations are NHWC), so its columns are permuted.
func Tensors(m Model, params []float32) ([]Tensor, error) {
	s, ok := m.(*seq)
	if !ok {
		return nil, fmt.Errorf("nn: model %s has no exchange layout", m.Name())
	}
	if len(params) != s.nparams {
		return nil, fmt.Errorf("nn: %s: %d parameters, want %d", s.name, len(params), s.nparams)
	}
	var out []Tensor
	s.walk(func(name string, i int, img imageShape) {
		p := s.params(params, i)
		switch l := s.layers[i].(type) {
		case *dense:
			w := make([]float32, l.out*l.in)
			for o := 0; o < l.out; o++ {
				for j := 0; j < l.in; j++ {
					w[o*l.in+j] = p[img.nhwcIndex(j)*l.out+o]
				}
			}
			out = append(out, Tensor{name + ".weight", []int{l.out, l.in}, w},
				Tensor{name + ".bias", []int{l.out}, append([]float32(nil), p[l.out*l.in:]...)})
		case *conv:
			kk := l.patch()
			w := make([]float32, l.cout*kk)
			for co := 0; co < l.cout; co++ {
				for ci := 0; ci < l.cin; ci++ {
					for ky := 0; ky < l.k; ky++ {
						for kx := 0; kx < l.k; kx++ {
							w[((co*l.cin+ci)*l.k+ky)*l.k+kx] = p[co*kk+(ky*l.k+kx)*l.cin+ci]
						}
					}
				}
			}
			out = append(out, Tensor{name + ".weight", []int{l.cout, l.cin, l.k, l.k}, w},
				Tensor{name + ".bias", []int{l.cout}, append([]float32(nil), p[l.cout*kk:]...)})
		}
	})
	return out, nil
}

// FromTensors is the inverse of Tensors: m's flat vector from tensors in
// the exchange layout. Every tensor the layout names must be there with
// its shape, and no other.
func FromTensors(m Model, ts []Tensor) ([]float32, error) {
	want, err := Tensors(m, make([]float32, m.NumParams()))
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Tensor, len(ts))
	for _, t := range ts {
		if _, dup := byName[t.Name]; dup {
			return nil, fmt.Errorf("nn: tensor %q given twice", t.Name)
		}
		byName[t.Name] = t
	}
	if len(ts) != len(want) {
		return nil, fmt.Errorf("nn: %d tensors for model %s, whose layout has %d (%s)", len(ts), m.Name(), len(want), names(want))
	}
	for _, w := range want {
		t, ok := byName[w.Name]
		if !ok {
			return nil, fmt.Errorf("nn: no tensor %q (model %s has %s)", w.Name, m.Name(), names(want))
		}
		if !sameShape(t.Shape, w.Shape) || len(t.Data) != w.Size() {
			return nil, fmt.Errorf("nn: tensor %q has shape %v, model %s's is %v", w.Name, t.Shape, m.Name(), w.Shape)
		}
	}
	s := m.(*seq)
	params := make([]float32, s.nparams)
	s.walk(func(name string, i int, img imageShape) {
		p := s.params(params, i)
		w, b := byName[name+".weight"].Data, byName[name+".bias"].Data
		switch l := s.layers[i].(type) {
		case *dense:
			for o := 0; o < l.out; o++ {
				for j := 0; j < l.in; j++ {
					p[img.nhwcIndex(j)*l.out+o] = w[o*l.in+j]
				}
			}
			copy(p[l.out*l.in:], b)
		case *conv:
			kk := l.patch()
			for co := 0; co < l.cout; co++ {
				for ci := 0; ci < l.cin; ci++ {
					for ky := 0; ky < l.k; ky++ {
						for kx := 0; kx < l.k; kx++ {
							p[co*kk+(ky*l.k+kx)*l.cin+ci] = w[((co*l.cin+ci)*l.k+ky)*l.k+kx]
						}
					}
				}
			}
			copy(p[l.cout*kk:], b)
		}
	})
	return params, nil
}

// ModelOf finds the model, and the input shape among shapes, whose
// exchange layout ts is (names and shapes of the tensors). Models are tried
// in the order of Names, each on every shape in order; the first whose
// layout matches is returned.
func ModelOf(ts []Tensor, shapes ...Shape) (Model, Shape, error) {
	for _, name := range Names() {
		for _, in := range shapes {
			m, err := New(name, in)
			if err != nil {
				continue // a shape too small for this model
			}
			if _, err := FromTensors(m, ts); err == nil {
				return m, in, nil
			}
		}
	}
	return nil, Shape{}, fmt.Errorf("nn: tensors %s are the layout of no model (%v) on inputs %v", names(ts), Names(), shapes)
}

func names(ts []Tensor) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.Name + fmt.Sprint(t.Shape)
	}
	return s
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// imageShape is an activation's h×w×c when it is an image (c = 0: flat).
type imageShape struct{ h, w, c int }

// nhwcIndex maps input j of a dense layer, numbered in PyTorch's flatten
// order of an NCHW activation (c, y, x), to pacer's NHWC index (y, x, c).
func (s imageShape) nhwcIndex(j int) int {
	if s.c <= 1 {
		return j // flat, or one channel: both orders agree
	}
	hw := s.h * s.w
	c, yx := j/hw, j%hw
	return yx*s.c + c
}

// walk calls f for every layer with parameters, with its exchange name
// and the shape of the activation it reads.
func (s *seq) walk(f func(name string, i int, in imageShape)) {
	var img imageShape
	nConv, nFC := 0, 0
	for i, l := range s.layers {
		switch l := l.(type) {
		case *conv:
			nConv++
			f("conv"+strconv.Itoa(nConv), i, img)
			img = imageShape{l.oh, l.ow, l.cout}
		case *maxPool2:
			img = imageShape{l.h / 2, l.w / 2, l.c}
		case pad:
			img = imageShape{l.h + 2*l.p, l.w + 2*l.p, l.c}
		case *dense:
			nFC++
			f("fc"+strconv.Itoa(nFC), i, img)
			img = imageShape{}
		}
	}
}
