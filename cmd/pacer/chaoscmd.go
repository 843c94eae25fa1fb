package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pacer-ps/pacer/chaos"
	"github.com/spf13/cobra"
)

func init() { register(newChaosCmd) }

func newChaosCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "chaos",
		Hidden: true, // scripts/chaos runs it; a test harness, not a user's command
		Short:  "run live jobs under randomized kill -9 faults and report hangs and lost updates",
		Long: `Run live jobs (2 shards and 3 workers as processes on loopback) over every paradigm
and kill -9 workers, shards and the coordinator (shard 0) at random points of the job, with
restarts (--restore) and rejoins under the same --id. Prints a table per paradigm and fault
kind (runs, finished, hangs, failed, lost acknowledged updates, processes left behind, time
to finish), every failed run with its fault schedule and the command that replays it, and
writes the whole as JSON (--json). Exits 1 when any run hung, failed, lost an acknowledged
update or left a process behind. docs/chaos.md.`,
		Example: `  scripts/chaos --runs 45 --seed 1 --timeout 60s --stop-for 12s  # the short form (scripts/test)
  scripts/chaos --runs 200 --seed 7 --json chaos.json            # the long form
  scripts/chaos --seed 7 --from 13 --runs 1                      # replay run 13`,
	}
	fs := cmd.Flags()
	var c chaos.Config
	fs.Uint64Var(&c.Seed, "seed", 1, "the suite's seed: run i's schedule is drawn from (seed, i)")
	fs.IntVar(&c.Runs, "runs", 27, "number of runs (27: every paradigm three times; 45: every paradigm × fault kind once)")
	fs.IntVar(&c.From, "from", 0, "index of the first run (replay: --from i --runs 1)")
	kinds := fs.String("kinds", "", "fault kinds, comma-separated (default all: "+strings.Join(chaos.Kinds, ",")+")")
	paradigms := fs.String("paradigms", "", "paradigms to cycle through, separated by ';' (default all: "+strings.Join(chaos.Paradigms, ";")+")")
	fs.StringVar(&c.Durability, "durability", "log", "the shards' --durability: log | checkpoint")
	fs.IntVar(&c.Workers, "workers", 3, "workers per job")
	fs.IntVar(&c.Shards, "shards", 2, "shards per job")
	fs.IntVar(&c.Pushes, "pushes", 300, "the job's length in pushes, all workers together")
	fs.DurationVar(&c.Timeout, "timeout", 60e9, "a run not finished by then is a hang")
	fs.DurationVar(&c.HeartbeatTimeout, "heartbeat-timeout", 1e9, "the job's heartbeat timeout")
	fs.DurationVar(&c.StopFor, "stop-for", 20e9, "how long a shard-stop fault holds its shard stopped (more than --heartbeat-timeout, less than --timeout)")
	fs.StringVar(&c.Dir, "dir", "", "where runs keep their checkpoints and process logs (a failed run's are kept); default a temporary directory")
	jsonOut := fs.String("json", "", "write the summary and every run as JSON to this file")
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		if *kinds != "" {
			c.Kinds = strings.Split(*kinds, ",")
		}
		if *paradigms != "" {
			c.Paradigms = strings.Split(*paradigms, ";")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c.Progress = func(r chaos.Run) {
			fmt.Fprintf(stderr, "chaos: run %d %s %s: %s in %.1f s (faults fired %d/%d, pushes %d of %d, lost %d, leaked %d)\n",
				r.Index, r.Paradigm, r.Kind, r.Outcome, r.Seconds, r.Fired, len(r.Faults), r.Pushes, r.Target, r.Lost, r.Leaked)
		}
		runs, err := chaos.Suite(ctx, c)
		if err != nil && len(runs) == 0 {
			return err
		}
		s := chaos.Summarize(c, "scripts/chaos "+strings.Join(os.Args[2:], " "), runs)
		s.Table(stdout, c)
		if *jsonOut != "" {
			b, jerr := json.MarshalIndent(s, "", "  ")
			if jerr == nil {
				jerr = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
			}
			if jerr != nil {
				return jerr
			}
		}
		if err != nil {
			return err
		}
		t := s.Total
		if t.Hangs+t.Failed+t.LostRuns+t.Leaked+t.Disagree > 0 {
			return fmt.Errorf("chaos: %d of %d runs hung, %d failed, %d lost acknowledged updates (%d in all), %d processes left behind, %d ended with shards under another rule than the coordinator's",
				t.Hangs, t.Runs, t.Failed, t.LostRuns, t.Lost, t.Leaked, t.Disagree)
		}
		return nil
	}
	return cmd
}
