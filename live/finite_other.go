//go:build !(amd64 || arm64) || purego

package live

import "github.com/pacer-ps/pacer/wire"

func checkFinite(v []float32) error { return wire.CheckFinite(v) }
