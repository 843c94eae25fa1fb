//go:build !linux

package hugemem

// advise does nothing off Linux: the block stays on ordinary pages.
func advise([]float32) {}
