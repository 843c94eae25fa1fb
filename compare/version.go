package compare

import (
	_ "embed"
	"runtime/debug"
	"strings"
)

// release is pacer's release version, its one source: this file embeds it
// and the Python package's build reads the same file (python/setup.py), so
// pacer version and pip's pacer-ps agree.
//
//go:embed VERSION
var release string

// Release is pacer's release version without the "v" (compare/VERSION).
func Release() string { return strings.TrimSpace(release) }

// Commit is the commit pacer was built from, stamped by the project's
// scripts with -ldflags "-X github.com/pacer-ps/pacer/compare.Commit=…"
// (these machines build with -buildvcs=false, so the build info has none).
var Commit string

// Build returns pacer's version and commit for summary.json. The version
// is the release's, "v" + Release(), whatever the build info says: a
// checkout's build would say "(devel)", which no package index takes. A
// commit that neither -ldflags nor the build info recorded is "unknown",
// never empty (a reader must not mistake a missing field for a clean build).
func Build() (version, commit string) {
	version, commit = "v"+Release(), Commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if commit == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					commit = s.Value
				}
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.modified" && s.Value == "true" && commit != "" {
					commit += "+modified"
				}
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}
