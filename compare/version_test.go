package compare

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The version pacer reports is the VERSION file's, which python/setup.py
// reads for the Python package: one source for both.
func TestBuildVersionIsRelease(t *testing.T) {
	b, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(want) {
		t.Fatalf("VERSION holds %q: want MAJOR.MINOR.PATCH (a version both Go modules and pip take)", want)
	}
	if v, _ := Build(); v != "v"+want {
		t.Errorf("Build() version %q, want v%s (compare/VERSION)", v, want)
	}
}
