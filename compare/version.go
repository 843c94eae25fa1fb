package compare

import "runtime/debug"

// Commit is the commit pacer was built from, stamped by the project's
// scripts with -ldflags "-X github.com/pacer-ps/pacer/compare.Commit=…"
// (these machines build with -buildvcs=false, so the build info has none).
var Commit string

// Build returns pacer's version and commit for summary.json. A commit
// that neither -ldflags nor the build info recorded is "unknown", never
// empty (a reader must not mistake a missing field for a clean build).
func Build() (version, commit string) {
	version, commit = "(devel)", Commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
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
