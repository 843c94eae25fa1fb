package data

import "fmt"

// ChannelMean is the mean feature value of each of channels channels over
// every sample of s (a sample's features hold its channels one after the
// other, as Image says). The sums run in float64 in one fixed order, sample
// by sample and feature by feature, so every process that holds the same
// set gets the same bits, whatever else runs beside it.
func ChannelMean(s *Set, channels int) ([]float64, error) {
	if channels < 1 || s.Dim%channels != 0 {
		return nil, fmt.Errorf("data: set %q: %d features do not split into %d channels", s.Name, s.Dim, channels)
	}
	if s.N == 0 {
		return nil, fmt.Errorf("data: set %q is empty: it has no mean", s.Name)
	}
	per := s.Dim / channels
	sums := make([]float64, channels)
	for i := 0; i < s.N; i++ {
		x := s.X[i*s.Dim : (i+1)*s.Dim]
		for c := range sums {
			for _, v := range x[c*per : (c+1)*per] {
				sums[c] += float64(v)
			}
		}
	}
	for c := range sums {
		sums[c] /= float64(s.N * per)
	}
	return sums, nil
}

// SubtractMean returns a copy of s with mean[c] subtracted from every
// feature of channel c (len(mean) channels, as ChannelMean). s itself is
// not changed: sets are shared read-only once loaded. The copy's features
// are no longer in [0, 1], so it is not for Validate.
func (s *Set) SubtractMean(mean []float64) (*Set, error) {
	if len(mean) < 1 || s.Dim%len(mean) != 0 {
		return nil, fmt.Errorf("data: set %q: %d features do not split into %d channels", s.Name, s.Dim, len(mean))
	}
	per := s.Dim / len(mean)
	out := *s
	out.X = make([]float32, len(s.X))
	for i := 0; i < s.N; i++ {
		for c, m := range mean {
			lo := i*s.Dim + c*per
			for k, v := range s.X[lo : lo+per] {
				out.X[lo+k] = float32(float64(v) - m)
			}
		}
	}
	return &out, nil
}
