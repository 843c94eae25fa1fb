// Package archtest holds no code: its test checks the layering of
// docs/architecture.md (which pacer package may import which) on the
// packages' source, so a change that breaks a rule fails `go test ./...`.
package archtest
