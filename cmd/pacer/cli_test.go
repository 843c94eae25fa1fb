package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/internal/kernel"
)

// Every command has a description, examples and GNU --flags in its help,
// reached as `pacer CMD --help`, `pacer CMD -h` and `pacer help CMD`.
func TestHelpOfEveryCommand(t *testing.T) {
	root := newRoot(nil, nil)
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"train", "compare", "sim", "server", "worker", "version", "completion", "help"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("no command %q among %v", want, names)
		}
	}
	for _, c := range root.Commands() {
		name := c.Name()
		if c.Short == "" || c.Long == "" || c.Example == "" {
			t.Errorf("%s: short %q, long %q, example %q: want all three", name, c.Short, c.Long, c.Example)
		}
		var outs []string
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			out, errs, code := pacer(t, args...)
			if code != 0 || errs != "" {
				t.Errorf("pacer %v: exit %d, stderr %q", args, code, errs)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] || outs[0] != outs[2] {
			t.Errorf("%s: --help, -h and help %s differ", name, name)
		}
		out := outs[0]
		for _, want := range []string{firstLine(c.Long), "Usage:\n  pacer " + name, "Examples:\n" + c.Example, "--help"} {
			if !strings.Contains(out, want) {
				t.Errorf("pacer %s --help lacks %q:\n%s", name, want, out)
			}
		}
		if regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+ `).MatchString(out) {
			t.Errorf("pacer %s --help prints a single-dash long flag:\n%s", name, out)
		}
	}
	// The flags are grouped under headings, printed --name style.
	out, _, _ := pacer(t, "train", "--help")
	order := []string{"\nFlags:\n", "--paradigm string", "\nCluster flags:\n", "--workers int", "\nLearning flags:\n",
		"--lr float", "\nOutput flags:\n", "--out string", "\nLive flags:\n", "--checkpoint-dir string"}
	at := 0
	for _, s := range order {
		i := strings.Index(out[at:], s)
		if i < 0 {
			t.Fatalf("pacer train --help: %q missing or out of order (want %q):\n%s", s, order, out)
		}
		at += i
	}
	// The top-level help lists the commands and the paradigm forms.
	out, _, code := pacer(t, "--help")
	if code != 0 || !strings.Contains(out, "train ") || !strings.Contains(out, "Paradigm specs:") || !strings.Contains(out, "ssp:s=3") {
		t.Errorf("pacer --help: exit %d\n%s", code, out)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// A mistyped command gets a suggestion and a short error, not the whole
// usage.
func TestMistypedCommandSuggestsOne(t *testing.T) {
	out, errs, code := pacer(t, "trian")
	if code != exitUsage || out != "" {
		t.Errorf("exit %d, stdout %q: want exit 2 and nothing on stdout", code, out)
	}
	for _, want := range []string{`unknown command "trian"`, "Did you mean this?\n\ttrain", "Run 'pacer --help' for usage."} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
	if n := strings.Count(errs, "\n"); n > 6 {
		t.Errorf("%d lines of error for a typo:\n%s", n, errs)
	}
}

// A usage error is short: the error and where to read the help.
func TestUsageErrorsAreShort(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--wokers", "3"}, "unknown flag: --wokers"},
		{[]string{"sim", "--workers", "x"}, `invalid argument "x" for "--workers"`},
		{[]string{"sim", "--paradigm"}, "flag needs an argument"},
		{[]string{"train", "--epochs", "0"}, "--epochs"},
		{[]string{"sim", "--paradigm", "bsp", "--workers", "2", "extra"}, `unexpected argument "extra"`},
		{[]string{"completion", "tcsh"}, "tcsh"},
		{[]string{"help", "trian"}, `no help topic "trian"`},
	} {
		out, errs, code := pacer(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("pacer %v: exit %d, stdout %q, stderr %q: want exit 2 and an error naming %q", c.args, code, out, errs, c.want)
		}
		if !strings.Contains(errs, "Run 'pacer "+c.args[0]+" --help' for usage.") || strings.Count(errs, "\n") > 3 {
			t.Errorf("pacer %v: want a short error pointing at the help, got:\n%s", c.args, errs)
		}
	}
}

func TestVersion(t *testing.T) {
	out, errs, code := pacer(t, "version")
	v, c := compare.Build()
	want := "pacer " + v + " (commit " + c + ")\nkernels " + kernel.Active().String() + " (default on this CPU " +
		kernel.DefaultPath().String() + "; available " + kernelPaths() + ")\n"
	if code != 0 || errs != "" || out != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want the build's version %s and commit %s", code, out, errs, v, c)
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o default -F __start_pacer pacer",
		"zsh":  "#compdef pacer",
		"fish": "complete -c pacer",
	} {
		out, errs, code := pacer(t, "completion", shell)
		if code != 0 || errs != "" || !strings.Contains(out, want) {
			t.Errorf("pacer completion %s: exit %d, stderr %q, %d bytes without %q", shell, code, errs, len(out), want)
		}
	}
	// The scripts complete through the hidden __complete command.
	out, _, code := pacer(t, "__complete", "sim", "--work")
	if code != 0 || !strings.Contains(out, "--workers") {
		t.Errorf("__complete sim --work: exit %d, %q", code, out)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary pacerBin built, once every test that runs it
// is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// pacerBin builds the command once per test run, with a commit stamped as
// scripts/setup stamps it.
func pacerBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pacer-cli-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "pacer")
		out, err := exec.Command("go", "build", "-ldflags", "-X github.com/pacer-ps/pacer/compare.Commit=test-commit",
			"-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building pacer: %v", buildErr)
	}
	return binPath
}

// The process's exit status: 0 on success, 1 on a failure, 2 on a usage
// error.
func TestExitCodes(t *testing.T) {
	bin := pacerBin(t)
	for _, c := range []struct {
		code int
		env  []string
		args []string
	}{
		{0, nil, []string{"version"}},
		{0, nil, []string{"sim", "--paradigm", "bsp", "--workers", "2", "--iterations", "5"}},
		{0, nil, []string{"help", "sim"}},
		{2, nil, []string{"trian"}},
		{2, nil, []string{"sim", "--bogus"}},
		{2, nil, []string{"sim", "--workers", "two"}},
		{2, nil, []string{"sim", "--paradigm", "zzz", "--workers", "2"}},
		{2, nil, []string{"version", "extra"}},
		{2, []string{"PACER_KERNEL=avx3"}, []string{"sim", "--paradigm", "bsp", "--workers", "2", "--iterations", "5"}},
		{0, []string{"PACER_KERNEL=go"}, []string{"version"}},
		// Valid flags, then the run fails: a port that does not exist.
		{1, []string{"PACER_TOKEN=x", "PACER_CONTROL_TOKEN=y"}, []string{"server", "--index", "0", "--peers", "a:1",
			"--dataset", "synthetic", "--train-n", "100", "--listen", "127.0.0.1:99999"}},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), c.env...)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("pacer %v: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "(commit test-commit)\n") {
		t.Errorf("pacer version: %q, %v; want the stamped commit", out, err)
	}
}

// Off a terminal (a file, a pipe, a test's buffer) compare prints
// summary.md's Markdown, byte for byte.
func TestComparePrintsMarkdownOffATerminal(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := pacer(t, "compare", "--mode", "sim", "--paradigms", "bsp;asp", "--workers", "2", "--iterations", "20",
		"--seeds", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.HasPrefix(out, string(md)) || !strings.Contains(out, "| paradigm |") {
		t.Errorf("stdout does not start with summary.md (%v):\n%s", err, out)
	}
}
