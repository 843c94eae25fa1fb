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

	"github.com/pacer-ps/pacer/live"
)

func init() {
	register(command{name: "worker", short: "run one worker of a live job", run: runWorker})
}

func runWorker(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("worker", stderr)
	var rf roleFlags
	rf.bind(fs)
	coord := fs.String("coordinator", "", "shard 0's address (default $PACER_COORDINATOR, the first of $PACER_PEERS, or TF_CONFIG's ps[0])")
	id := fs.Int("id", -1, "worker id to take (default $PACER_INDEX or TF_CONFIG's; -1: the coordinator assigns one)")
	dataDir := fs.String("data-dir", "", "directory with the data set's files on this machine")
	connect := fs.Duration("connect-timeout", time.Minute, "give up if the coordinator cannot be reached for this long (> 0)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *connect <= 0 {
		return fmt.Errorf("--connect-timeout=%s must be positive", *connect)
	}
	env := live.Env{}
	role, err := env.Role("worker")
	if err != nil {
		return err
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
		return errors.New("no coordinator: give --coordinator, $PACER_COORDINATOR, $PACER_PEERS or TF_CONFIG")
	}
	token, log, tr, err := rf.connection(env, stderr, false)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := live.RunWorker(ctx, live.WorkerConfig{Coordinator: addr, Transport: tr, Token: token, ID: role.Index, DataDir: *dataDir,
		ConnectTimeout: *connect, Logger: log})
	if errors.Is(err, live.ErrJobDone) {
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
