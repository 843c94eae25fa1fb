package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pacer-ps/pacer/check"
	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/report"
	"github.com/pacer-ps/pacer/runstats"
)

func init() { register(newCheckCmd) }

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "hold the prediction against a live run: the same scenario in virtual time and on the live server",
		Long: `Run one comparison twice, with the same paradigms, job, timing model and seeds: in virtual
time (the prediction) and on the live server on this machine (the measurement), whose workers
stretch their real iterations to the same model (--speeds, --jitter, --straggler, in units of
--base, default 20ms). Print, and write to --out/check.json and check.md, per paradigm the
predicted and measured throughput, waiting share, staleness mean and max and time to target,
the throughput ranking on each side, and where the two differ, why. Each side's full report
goes to --out/predicted and --out/measured.

Server delays (--server-delay, real durations) are emulated on both sides. Links (--link,
--worker-link, --shard-link, a scenario's network:) are charged by the prediction and emulated
live in tcp mode: each shard and worker runs on a host of its own, a Linux network namespace
whose link the kernel rate-limits (needs root and iproute2; latencies up to 100us are left to
the veth, larger ones need the kernel's netem: where it is missing, both sides run with the
veth's and the output says so). Without links the live side runs on loopback and the
prediction charges no network. After the live runs the check
predicts again with the overhead it measured charged as a latency on every message (the
refit: one parameter, fitted on the median paradigm, checked on every one).`,
		Example: `  # the pair preset, 1 seed, live processes over TCP
  pacer check --scenario pair --epochs 1 --out out/check

  # incast: two workers into one shard whose link carries 160 Mbit/s (as root)
  pacer check --paradigms 'bsp;asp' --workers 2 --shard-link 0:rate=160Mbit --epochs 1 --seeds 1

  # three paradigms on an uneven cluster, in-process live runs, 2 seeds
  pacer check --paradigms 'bsp;asp;ssp:s=2' --workers 3 --speeds 1,1,2.5 --jitter 0.1 --live inproc --seeds 2`,
	}
	fs := cmd.Flags()
	f := bindCompareFlags(fs)
	f.live = modeFlag(fs, "live", runstats.TCP, "where the measurement runs: tcp (processes on loopback) | inproc (goroutines)", runstats.Inproc, runstats.TCP)
	if o := fs.Lookup("out"); o != nil {
		o.DefValue, o.Usage = "out/check", "directory for check.json, check.md and the two reports"
		*f.out = "out/check"
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runCompare(fs, commandArgs(cmd), f, nil, stdout, stderr)
	}
	return cmd
}

// runCheck runs the prediction and the measurement of cc and writes them.
func runCheck(cc compare.Config, live runstats.Mode, out string, args []string, undo func(), stdout, stderr io.Writer) error {
	pr := newProgress(stderr)
	cc.Progress = func(line string) { pr.printf("%s", line) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := check.Run(ctx, cc, live)
	pr.done()
	if err != nil {
		undo()
		if ctx.Err() != nil {
			return fmt.Errorf("check stopped by a signal: %w; nothing was written to %s", err, out)
		}
		return err
	}
	cmdline := "pacer check " + shellJoin(args)
	for _, side := range []struct {
		dir, title string
		sum        *compare.Summary
	}{{"predicted", "pacer check: the prediction (virtual time)", r.Predicted},
		{"measured", "pacer check: the measurement (live, " + string(live) + " mode)", r.Measured}} {
		rs := report.Scenario{Title: side.title, Description: cc.Scenario.Description, Command: cmdline}
		if _, err := report.Write(filepath.Join(out, side.dir), rs, side.sum); err != nil {
			undo()
			return err
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		undo()
		return err
	}
	md := "# " + cmdline + "\n\n" + r.Markdown()
	for name, b := range map[string][]byte{"check.json": append(js, '\n'), "check.md": []byte(md)} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			undo()
			return fmt.Errorf("check: %w", err)
		}
	}
	fmt.Fprint(stdout, r.Markdown())
	fmt.Fprintf(stdout, "\nwrote %s, %s and the reports in %s and %s\n", filepath.Join(out, "check.json"), filepath.Join(out, "check.md"),
		filepath.Join(out, "predicted"), filepath.Join(out, "measured"))
	return nil
}
