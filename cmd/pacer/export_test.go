package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
)

// evalCount reads "(C of N samples" from pacer eval's output.
func evalCount(t *testing.T, out string) (correct, n int) {
	t.Helper()
	i := strings.Index(out, "(")
	if i < 0 {
		t.Fatalf("no count in %q", out)
	}
	if _, err := fmt.Sscanf(out[i:], "(%d of %d samples", &correct, &n); err != nil {
		t.Fatalf("no count in %q: %v", out, err)
	}
	return correct, n
}

func pacerRun(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("pacer %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// A live job's checkpoints → pacer export → one .npz → PyTorch alone
// (python/eval_npz.py builds the architecture in torch and loads the
// file as its state_dict) gives the test accuracy pacer eval gives, for
// every model (the padded convolutions of alexnet-small and cifar-net
// included). pacer eval reads the checkpoints and the exported
// file to the same count.
func TestExportLoadsInPyTorch(t *testing.T) {
	torch := exec.Command("/usr/bin/python3", "-c", "import torch, numpy")
	haveTorch := torch.Run() == nil
	for _, model := range []string{"mlp", "cnn", "cifar-net", "alexnet-small"} {
		t.Run(model, func(t *testing.T) {
			dir := t.TempDir()
			ck, file := filepath.Join(dir, "ckpt"), filepath.Join(dir, "model.npz")
			limit, lr, epochs := "2000", "0.05", "1"
			switch model {
			case "cnn", "cifar-net":
				limit, lr = "1600", "0.1"
			case "alexnet-small": // deeper, with PyTorch's initialisation: slower to leave chance
				limit, lr, epochs = "4000", "0.1", "3"
			}
			pacerRun(t, "train", "--mode", "inproc", "--model", model, "--workers", "2", "--shards", "2", "--train-limit", limit,
				"--test-limit", "200", "--epochs", epochs, "--lr", lr, "--checkpoint-dir", ck, "--out", filepath.Join(dir, "out"))
			out := pacerRun(t, "export", "--checkpoint-dir", ck, "--model-file", file)
			if !strings.Contains(out, "model "+model) || !strings.Contains(out, "from 2 shard checkpoints") {
				t.Errorf("export said %q", out)
			}
			fromCkpt, n := evalCount(t, pacerRun(t, "eval", "--checkpoint-dir", ck, "--test-limit", "1000"))
			fromFile, n2 := evalCount(t, pacerRun(t, "eval", "--model-file", file, "--test-limit", "1000"))
			if fromCkpt != fromFile || n != 1000 || n2 != 1000 {
				t.Fatalf("pacer eval: %d of %d from the checkpoints, %d of %d from the exported file", fromCkpt, n, fromFile, n2)
			}
			if fromCkpt < 200 {
				t.Fatalf("%d of 1000 right: the job did not train (chance is 100)", fromCkpt)
			}
			if !haveTorch {
				t.Skip("PyTorch is not installed for /usr/bin/python3 (scripts/setup installs python3-torch as root): export checked against pacer eval only")
			}
			cmd := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "python", "eval_npz.py"), file, "--test-limit", "1000", "--json")
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("eval_npz.py: %v\n%s", err, b)
			}
			var py struct {
				Model      string
				Correct, N int
			}
			if err := json.Unmarshal(b, &py); err != nil {
				t.Fatalf("eval_npz.py printed %q: %v", b, err)
			}
			t.Logf("%s: pacer eval %d of %d, PyTorch %d of %d", model, fromCkpt, n, py.Correct, py.N)
			// The same weights and inputs in float32: only a near-tie whose
			// order the two kernels' rounding flips may differ.
			if py.Model != model || py.N != n || abs(py.Correct-fromCkpt) > 2 {
				t.Errorf("PyTorch: %s, %d of %d; pacer eval: %d of %d", py.Model, py.Correct, py.N, fromCkpt, n)
			}
		})
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// A model trained with --normalize mean is evaluated on images centred the
// same way with pacer eval --normalize mean --train-limit N: the job's own
// final evaluation, to the sample. Bad combinations are refused.
func TestEvalNormalizedModel(t *testing.T) {
	dir := t.TempDir()
	ck, out := filepath.Join(dir, "ckpt"), filepath.Join(dir, "out")
	pacerRun(t, "train", "--mode", "inproc", "--model", "mlp", "--workers", "2", "--train-limit", "2000", "--test-limit", "500",
		"--epochs", "1", "--normalize", "mean", "--checkpoint-dir", ck, "--out", out)
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		FinalAccuracy float64 `json:"final_accuracy"`
		Normalize     string
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Normalize != "mean" {
		t.Fatalf("summary: %v, normalize %q", err, r.Normalize)
	}
	centred, n := evalCount(t, pacerRun(t, "eval", "--checkpoint-dir", ck, "--test-limit", "500", "--normalize", "mean", "--train-limit", "2000"))
	if n != 500 || centred != int(r.FinalAccuracy*500+0.5) {
		t.Errorf("pacer eval --normalize mean: %d of %d, the job's final accuracy %v", centred, n, r.FinalAccuracy)
	}
	raw, _ := evalCount(t, pacerRun(t, "eval", "--checkpoint-dir", ck, "--test-limit", "500"))
	t.Logf("%d of 500 on centred images, %d on the images as loaded", centred, raw)
	for _, args := range [][]string{{"--normalize", "std"}, {"--train-limit", "10"}, {"--normalize", "mean", "--train-limit", "-1"}} {
		var o, e bytes.Buffer
		if code := run(append([]string{"eval", "--checkpoint-dir", ck}, args...), &o, &e); code == 0 || !strings.Contains(e.String(), strings.TrimPrefix(args[len(args)-2], "--")) {
			t.Errorf("eval %v: exit %d, %q", args, code, e.String())
		}
	}
}

// pacer export --average writes the θ̄ a job run with --ema checkpointed,
// in the flat model's file form, and refuses checkpoints without it,
// writing nothing.
func TestExportAverage(t *testing.T) {
	w, avg := []float32{1, -2, 3, -4, 5, -6, 7}, []float32{0.5, 0.25, -1, 2, 0, 1e-3, 9}
	write := func(dir string, ema bool) {
		for i, r := range [][2]int{{0, 3}, {3, 7}} {
			st := &ckpt.State{Meta: ckpt.Meta{Shard: i, Shards: 2, Lo: r[0], Hi: r[1], NumParams: len(w), Version: 4, Paradigm: "asp",
				Model: nn.FlatName(len(w))}, Weights: w[r[0]:r[1]]}
			if ema {
				st.EMA = avg[r[0]:r[1]]
			}
			if _, err := ckpt.Write(dir, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	ck, file := filepath.Join(dir, "ckpt"), filepath.Join(dir, "avg.npz")
	write(ck, true)
	out := pacerRun(t, "export", "--checkpoint-dir", ck, "--model-file", file, "--average")
	if !strings.Contains(out, "moving average") || !strings.Contains(out, "model flat:n=7") {
		t.Errorf("export --average said %q", out)
	}
	if got, err := modelfile.ReadFlat(file, len(avg)); err != nil || !slices.Equal(got, avg) {
		t.Fatalf("export --average wrote %v (%v), want θ̄ %v", got, err, avg)
	}
	pacerRun(t, "export", "--checkpoint-dir", ck, "--model-file", file)
	if got, err := modelfile.ReadFlat(file, len(w)); err != nil || !slices.Equal(got, w) {
		t.Fatalf("export wrote %v (%v), want θ %v", got, err, w)
	}

	plain, none := filepath.Join(dir, "plain"), filepath.Join(dir, "none.npz")
	write(plain, false)
	var o, e bytes.Buffer
	if code := run([]string{"export", "--checkpoint-dir", plain, "--model-file", none, "--average"}, &o, &e); code == 0 ||
		!strings.Contains(e.String(), "without --ema") {
		t.Errorf("export --average of checkpoints without θ̄: exit %d, %q", code, e.String())
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("the refused export wrote %s (%v)", none, err)
	}
}

// pacer eval --average measures the θ̄ a job run with --ema checkpointed:
// to the sample what pacer export --average's file gives, and not the
// weights' count. It is refused with a model file (one set of weights) and
// for checkpoints without θ̄, naming --ema, printing nothing.
func TestEvalAverage(t *testing.T) {
	dir := t.TempDir()
	ck, plain, file := filepath.Join(dir, "ckpt"), filepath.Join(dir, "plain"), filepath.Join(dir, "avg.npz")
	train := func(ck string, extra ...string) {
		pacerRun(t, append([]string{"train", "--mode", "inproc", "--model", "mlp", "--workers", "2", "--shards", "2", "--train-limit", "1600",
			"--test-limit", "100", "--epochs", "1", "--checkpoint-dir", ck, "--out", filepath.Join(dir, "out")}, extra...)...)
	}
	// A short decay: θ̄ of a 1-epoch job (about 25 updates) is far enough
	// behind θ to change the count (215 of 500 against 287 when written).
	train(ck, "--ema", "0.8")
	out := pacerRun(t, "eval", "--checkpoint-dir", ck, "--test-limit", "500", "--average")
	if !strings.Contains(out, "moving average") || !strings.Contains(out, "model mlp") {
		t.Errorf("eval --average said %q", out)
	}
	avg, n := evalCount(t, out)
	pacerRun(t, "export", "--checkpoint-dir", ck, "--model-file", file, "--average")
	fromFile, n2 := evalCount(t, pacerRun(t, "eval", "--model-file", file, "--test-limit", "500"))
	weights, n3 := evalCount(t, pacerRun(t, "eval", "--checkpoint-dir", ck, "--test-limit", "500"))
	t.Logf("θ̄ %d of %d, its export %d of %d, θ %d of %d", avg, n, fromFile, n2, weights, n3)
	if n != 500 || n2 != 500 || n3 != 500 || avg != fromFile {
		t.Fatalf("eval --average: %d of %d; export --average's file: %d of %d", avg, n, fromFile, n2)
	}
	if avg == weights {
		t.Errorf("eval --average and eval both %d of 500: θ̄ was not what was measured", avg)
	}
	if avg < 150 {
		t.Errorf("θ̄ %d of 500 right: the job did not train (chance is 50)", avg)
	}

	train(plain)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-file", file, "--average"}, "--checkpoint-dir"},
		{[]string{"--checkpoint-dir", plain, "--average"}, "--ema"},
	} {
		var o, e bytes.Buffer
		if code := run(append(append([]string{"eval"}, c.args...), "--test-limit", "50"), &o, &e); code == 0 || o.Len() != 0 ||
			!strings.Contains(e.String(), c.want) {
			t.Errorf("eval %v: exit %d, stdout %q, stderr %q (want an error naming %s)", c.args, code, o.String(), e.String(), c.want)
		}
	}
}
