package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(newWorkerCmd) }

func newWorkerCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "run one worker of a live job",
		Long: `Run one worker of a live job on a real cluster: it dials the coordinator (shard 0),
learns the job from it, trains on its part of the data and pushes its gradients until the
job ends.

The job token comes from $PACER_TOKEN (flags show in ps); the coordinator's address from
--coordinator, $PACER_COORDINATOR, the first of $PACER_PEERS or TF_CONFIG. See
docs/deploy.md.`,
		Example: `  export PACER_TOKEN=...   # the job's token, the same as the servers'
  pacer worker --coordinator 127.0.0.1:7070

  # take worker id 3, with TLS verifying the servers against a CA
  pacer worker --coordinator shard-0:7070 --id 3 --tls-ca ca.crt --data-dir /data`,
	}
	fs := cmd.Flags()
	var rf roleFlags
	rf.bind(fs)
	coord := fs.String("coordinator", "", "shard 0's address (default $PACER_COORDINATOR, the first of $PACER_PEERS, or TF_CONFIG's ps[0])")
	id := fs.Int("id", -1, "worker id to take (default $PACER_INDEX or TF_CONFIG's; -1: the coordinator assigns one)")
	dataDir := fs.String("data-dir", "", "directory with the data set's files on this machine")
	connect := fs.Duration("connect-timeout", time.Minute, "give up if the coordinator cannot be reached for this long (> 0)")
	metrics := fs.String("metrics-addr", "", "serve the worker's Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz")
	cmd.RunE = func(*cobra.Command, []string) error {
		return runWorker(fs, &rf, coord, id, dataDir, connect, *metrics, stdout, stderr)
	}
	return cmd
}

func runWorker(fs *pflag.FlagSet, rf *roleFlags, coord *string, id *int, dataDir *string, connect *time.Duration, metrics string, stdout, stderr io.Writer) error {
	if *connect <= 0 {
		return usage(fmt.Errorf("--connect-timeout=%s must be positive", *connect))
	}
	env := roles.Env{}
	role, err := env.Role("worker")
	if err != nil {
		return usage(err)
	}
	set := setFlags(fs)
	if set["id"] {
		role.Index = *id
	}
	addr := *coord
	if addr == "" {
		addr = os.Getenv("PACER_COORDINATOR")
	}
	if addr == "" && len(role.Shards) > 0 {
		addr = role.Shards[0]
	}
	if addr == "" {
		return usage(errors.New("no coordinator: give --coordinator, $PACER_COORDINATOR, $PACER_PEERS or TF_CONFIG"))
	}
	token, log, tr, err := rf.connection(env, stderr, false)
	if err != nil {
		return usage(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := worker.Run(ctx, worker.Config{Coordinator: addr, Transport: tr, Token: token, ID: role.Index, DataDir: *dataDir,
		ConnectTimeout: *connect, Logger: log, MetricsAddr: metrics})
	if errors.Is(err, worker.ErrJobDone) {
		fmt.Fprintf(stdout, "pacer: the job had already finished\n")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pacer: worker %d done: %d pushes, %.1fs computing, %.1fs waiting\n",
		res.ID, res.Pushes, res.Busy.Seconds(), res.Wait.Seconds())
	return nil
}
