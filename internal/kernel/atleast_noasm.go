//go:build !amd64 || noasm

package kernel

func firstAtLeast(x []float32, bits uint32) int { return firstAtLeastGo(x, bits) }
