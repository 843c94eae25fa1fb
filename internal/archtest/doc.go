// Package archtest holds no code: its tests check the layering of
// docs/architecture.md (which pacer package may import which) on the
// packages' source, and the docs' map (README.md within 150 lines, every
// docs page reachable from it, every relative link resolving), so a change
// that breaks either fails `go test ./...`.
package archtest
