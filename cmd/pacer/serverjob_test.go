package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
)

// flatParams parses a server's job flags (pacer server's) into a job.
func flatParams(args ...string) (*job.Description, []float32, error) {
	var f serverJobFlags
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	f.bind(fs)
	if !slices.Contains(args, "--job") {
		args = append([]string{"--train-n", "640", "--dataset", "synthetic"}, args...)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	d, err := f.params(given)
	return d, f.initW, err
}

func initFile(t *testing.T, w []float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "init.npz")
	if err := modelfile.WriteFlat(path, w); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFlatInitFlags: a flat model's job records its --init file's digest;
// every wrong combination is refused with the flag named.
func TestFlatInitFlags(t *testing.T) {
	w := []float32{0.5, -1, 2, 0.25}
	good := initFile(t, w)
	d, init, err := flatParams("--model", "flat:n=4", "--init", good)
	if err != nil {
		t.Fatal(err)
	}
	if d.Job.InitSHA256 != nn.FlatDigest(w) || !slices.Equal(init, w) {
		t.Fatalf("digest %q, init %v", d.Job.InitSHA256, init)
	}
	desc, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	other := initFile(t, []float32{0.5, -1, 2, 0})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "flat:n=4"}, "--model flat:n=4: give --init FILE"},
		{[]string{"--model", "flat:n=5", "--init", good}, "--init: modelfile: " + good + ": 4 parameters; the model has 5"},
		{[]string{"--model", "mlp", "--init", good}, "--init: model mlp initializes from --seed"},
		{[]string{"--model", "flat:n=0", "--init", good}, "want flat:n=N"},
		{[]string{"--model", "flat:n=4", "--init", filepath.Join(t.TempDir(), "none.npz")}, "--init: modelfile:"},
		// The whole job given: --init must be the file it names by digest.
		{[]string{"--job", string(desc), "--init", other}, "the job's are " + d.Job.InitSHA256[:12]},
		{[]string{"--job", string(desc)}, "--job: --model flat:n=4: give --init FILE"},
	} {
		if _, _, err := flatParams(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v\nwant an error containing %q", tc.args, err, tc.want)
		}
	}
	if d2, init2, err := flatParams("--job", string(desc), "--init", good); err != nil || d2.Job.InitSHA256 != d.Job.InitSHA256 || !slices.Equal(init2, w) {
		t.Errorf("--job with its own --init: %v", err)
	}
}

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

// pacer server takes --lr-schedule in pacer train's syntax, into the job
// its shards run; a bad one is refused, naming the flag.
func TestServerScheduleAsTrain(t *testing.T) {
	const spec = "step:every=2,gamma=0.5+warmup:steps=10,div=4"
	want, err := optim.ParseSchedule(spec)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := flatParams("--lr-schedule", spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Job.Schedule, want) {
		t.Errorf("schedule %+v, want %+v", d.Job.Schedule, want)
	}
	if _, _, err := flatParams("--lr-schedule", "cosine"); err == nil || !strings.Contains(err.Error(), "--lr-schedule") {
		t.Errorf("--lr-schedule cosine: %v", err)
	}
}
