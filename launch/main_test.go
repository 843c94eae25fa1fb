package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pacerBin is the pacer binary the tcp-mode tests launch, built once.
var pacerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pacer-launch-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pacerBin = filepath.Join(dir, "pacer")
	build := exec.Command("go", "build", "-o", pacerBin, "github.com/pacer-ps/pacer/cmd/pacer")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pacer:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
