package live

import (
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
)

// pacer server takes --targets and --normalize as pacer train does: into
// the job its shard 0 reports on; a bad accuracy is refused, naming it.
func TestServerTargetsAndNormalize(t *testing.T) {
	d, _, err := flatParams("--targets", "0.6, 0.7", "--normalize", "mean")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Job.Targets, []float64{0.6, 0.7}) || d.Job.Normalize != job.NormalizeMean {
		t.Errorf("targets %v, normalize %q", d.Job.Targets, d.Job.Normalize)
	}
	for _, bad := range []string{"0.6,x", "0", "1.5", ""} {
		if _, _, err := flatParams("--targets", bad); err == nil || !strings.Contains(err.Error(), "targets") {
			t.Errorf("--targets %q: %v", bad, err)
		}
	}
	if _, _, err := flatParams("--normalize", "std"); err == nil || !strings.Contains(err.Error(), "normalize") {
		t.Errorf("--normalize std: %v", err)
	}
}
