//go:build !amd64 || noasm

package kernel

func firstNonFinite(x []float32) int { return firstNonFiniteGo(x) }
