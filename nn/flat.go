package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A flat model, named "flat:n=N", is N float32 parameters of a model pacer
// does not know: a user's own PyTorch network (docs/python.md, "A model of
// your own"). Its shards hold, update, checkpoint and export the vector
// like any other; nothing in Go computes its gradients or evaluates it, so
// New refuses it and its workers are the user's scripts.

// FlatPrefix starts every flat model's name.
const FlatPrefix = "flat:"

// MaxFlat is the most parameters a flat model may have: 2^28 float32, 1 GiB,
// the wire's largest frame, so a one-shard job still pulls its block in one
// reply.
const MaxFlat = 1 << 28

// FlatName is the name of the flat model of n parameters.
func FlatName(n int) string { return FlatPrefix + "n=" + strconv.Itoa(n) }

// ParseFlat reports whether name is a flat model's and its size. A name
// that starts as one but is malformed (flat:n=0, flat:x=3) is an error
// naming the valid form.
func ParseFlat(name string) (n int, ok bool, err error) {
	rest, found := strings.CutPrefix(name, FlatPrefix)
	if !found {
		if name == "flat" {
			return 0, false, fmt.Errorf("nn: model %q: give its size, flat:n=N (N parameters, 1 ≤ N ≤ %d)", name, MaxFlat)
		}
		return 0, false, nil
	}
	v, found := strings.CutPrefix(rest, "n=")
	if found {
		n, err = strconv.Atoi(v)
	}
	if !found || err != nil || n < 1 || n > MaxFlat {
		return 0, false, fmt.Errorf("nn: model %q: want flat:n=N, N parameters with 1 ≤ N ≤ %d", name, MaxFlat)
	}
	return n, true, nil
}

// NumParams is the parameter count of the model name on samples of shape
// in: one of New's, or a flat model (whatever its input).
func NumParams(name string, in Shape) (int, error) {
	n, ok, err := ParseFlat(name)
	if err != nil || ok {
		return n, err
	}
	m, err := New(name, in)
	if err != nil {
		return 0, err
	}
	return m.NumParams(), nil
}

// FlatDigest is the SHA-256 (hex) of w's float32 values, little-endian:
// what a job description records of a flat model's initial weights, so
// that every shard of the job is checked to start from the same ones.
func FlatDigest(w []float32) string {
	h := sha256.New()
	var b [4096]byte
	for len(w) > 0 {
		k := min(len(w), len(b)/4)
		for i, v := range w[:k] {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		h.Write(b[:4*k])
		w = w[k:]
	}
	return hex.EncodeToString(h.Sum(nil))
}
