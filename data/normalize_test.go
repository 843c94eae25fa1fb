package data

import (
	"slices"
	"testing"
)

// A 2-channel set of 2×1 images, 3 samples, whose means are worked out by
// hand: channel 0 holds 0.1 0.3 | 0.5 0.7 | 0.2 0.4 (sum 2.2 over 6
// features: 0.36666…), channel 1 holds 0.9 0.9 | 0 0 | 0.6 0 (sum 2.4:
// 0.4).
func tinySet() *Set {
	return &Set{
		X: []float32{
			0.1, 0.3, 0.9, 0.9,
			0.5, 0.7, 0, 0,
			0.2, 0.4, 0.6, 0,
		},
		Y: []uint8{0, 1, 0}, N: 3, Dim: 4, Classes: 2, Name: "tiny/train",
	}
}

func TestChannelMeanByHand(t *testing.T) {
	s := tinySet()
	m, err := ChannelMean(s, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The float32 features widened to float64, summed in sample order,
	// divided by 6: what the hand sums above give, up to float32's
	// rounding of the features themselves.
	want := []float64{2.2 / 6, 2.4 / 6}
	for c := range want {
		if d := m[c] - want[c]; d > 1e-7 || d < -1e-7 {
			t.Errorf("channel %d: mean %v, want %v", c, m[c], want[c])
		}
	}
	// One channel: the mean of all twelve features, 4.6/12.
	all, err := ChannelMean(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := all[0] - 4.6/12; d > 1e-7 || d < -1e-7 {
		t.Errorf("one channel: mean %v, want %v", all[0], 4.6/12)
	}

	out, err := s.SubtractMean(m)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out.X {
		c := (i % 4) / 2
		if want := float32(float64(s.X[i]) - m[c]); v != want {
			t.Errorf("feature %d: %v, want %v", i, v, want)
		}
	}
	// Centred: each channel of the result sums to (almost) zero.
	back, err := ChannelMean(out, 2)
	if err != nil {
		t.Fatal(err)
	}
	for c, v := range back {
		if v > 1e-7 || v < -1e-7 {
			t.Errorf("channel %d after subtraction: mean %v, want 0", c, v)
		}
	}
	if !slices.Equal(s.X, tinySet().X) {
		t.Error("SubtractMean changed the set it was given")
	}
	if out.N != s.N || out.Dim != s.Dim || &out.Y[0] != &s.Y[0] {
		t.Error("the copy lost the set's shape or labels")
	}
}

func TestChannelMeanBadShape(t *testing.T) {
	s := tinySet()
	for _, c := range []int{0, 3, 5} {
		if _, err := ChannelMean(s, c); err == nil {
			t.Errorf("%d channels of 4 features: no error", c)
		}
	}
	if _, err := s.SubtractMean([]float64{0.1, 0.2, 0.3}); err == nil {
		t.Error("3 means for 4 features: no error")
	}
	if _, err := ChannelMean(s.Subset(0), 1); err == nil {
		t.Error("empty set: no error")
	}
}
