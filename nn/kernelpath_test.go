package nn

import (
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// TestKernelPath fails when PACER_KERNEL asks for a path the kernels cannot
// run, so a run of these tests forced onto one path (scripts/test) does not
// pass by testing the default instead.
func TestKernelPath(t *testing.T) {
	if err := kernel.EnvErr(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel path %v", kernel.Active())
}
