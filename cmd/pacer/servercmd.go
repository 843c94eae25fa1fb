package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(newServerCmd) }

// roleFlags are the flags every live process shares.
type roleFlags struct {
	token    string
	logLevel string
	logJSON  bool
	tls      tlsFlags
}

func (r *roleFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&r.token, "token", "", "shared secret of every connection (default $PACER_TOKEN; prefer the variable: flags show in ps)")
	fs.StringVar(&r.logLevel, "log-level", "info", "log level: debug | info | warn | error")
	fs.BoolVar(&r.logJSON, "log-json", false, "log JSON lines instead of text")
	r.tls.bind(fs)
}

// connection resolves what every live process needs before it talks to
// anyone: the token, the logger and the transport (TLS or not; a server
// must have a certificate).
func (r *roleFlags) connection(env roles.Env, stderr io.Writer, server bool) (string, *slog.Logger, wire.TCP, error) {
	token, err := r.resolveToken(env)
	if err != nil {
		return "", nil, wire.TCP{}, err
	}
	log, err := r.logger(stderr)
	if err != nil {
		return "", nil, wire.TCP{}, err
	}
	tr, err := r.tls.transport(env, server)
	return token, log, tr, err
}

func (r *roleFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(r.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level=%q: want debug, info, warn or error", r.logLevel)
	}
	o := &slog.HandlerOptions{Level: lv}
	if r.logJSON {
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return slog.New(slog.NewTextHandler(w, o)), nil
}

func (r *roleFlags) resolveToken(env roles.Env) (string, error) {
	if r.token != "" {
		return r.token, nil
	}
	if t := env.Token(); t != "" {
		return t, nil
	}
	return "", errors.New("no token: set $PACER_TOKEN (or --token) to the job's shared secret")
}

func newServerCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "run one shard server of a live job (shard 0 also hosts the coordinator)",
		Long: `Run one shard server of a live job on a real cluster. Shard 0 also hosts the
coordinator, which admits workers and ends the job; every shard must be given the same
job flags (paradigm, workers, shards, learning flags).

The job ends by itself: shard 0 evaluates the model on the test set every --eval-every
epochs, and when the workers finish it evaluates the final model, writes
--out/summary.json (the schema of pacer train) and --out/model.npz (the final weights, as
pacer export writes them) and tells every shard to stop; each writes its final checkpoint
(with --checkpoint-dir) and exits 0. In a cluster, whose pods restart when they exit,
--exit-when-done=false --out DIR does the same but serves on (docs/deploy.md).

A model of your own (a PyTorch network pacer does not have, trained by PyTorch workers):
--model flat:n=N with --init FILE, its initial weights as pacer.torch.save_flat writes them
(the same file on every shard). The shards hold, update, checkpoint and export its N floats;
shard 0 cannot evaluate it, so the summary has no accuracy and the workers evaluate it
(docs/python.md, examples/resnet_fashion.py).

The secrets come from the environment ($PACER_TOKEN for every connection,
$PACER_CONTROL_TOKEN for the control roles): flags show in ps. The shard's index, its
address and its peers come from the flags, $PACER_INDEX / $PACER_LISTEN / $PACER_PEERS,
TF_CONFIG, or a StatefulSet pod's ordinal, in that order. See docs/deploy.md.`,
		Example: `  # two shards and four workers on one machine
  export PACER_TOKEN=$(openssl rand -hex 16) PACER_CONTROL_TOKEN=$(openssl rand -hex 16)
  pacer server --index 0 --peers 127.0.0.1:7070,127.0.0.1:7071 --shards 2 --workers 4 --paradigm ssp:s=3 &
  pacer server --index 1 --peers 127.0.0.1:7070,127.0.0.1:7071 --shards 2 --workers 4 --paradigm ssp:s=3 &

  # a model of your own: its N parameters and initial weights
  pacer server --index 0 --peers 127.0.0.1:7070 --workers 2 --model flat:n=77850 --init init.npz

  # with TLS and checkpoints
  pacer server --index 0 --peers a:7070 --tls-cert shard.crt --tls-key shard.key --checkpoint-dir /ckpt`,
	}
	fs := cmd.Flags()
	var jf serverJobFlags
	jf.bind(fs)
	var rf roleFlags
	rf.bind(fs)
	index := fs.Int("index", -1, "this shard's index (default $PACER_INDEX, TF_CONFIG's ps index, or a StatefulSet pod's ordinal)")
	listen := fs.String("listen", "", "address to serve on (default 127.0.0.1:7070+index; TF_CONFIG: its ps entry's port on every interface)")
	peers := fs.String("peers", "", "every shard's address as workers dial them, comma-separated, shard 0 first (default $PACER_PEERS or TF_CONFIG's ps list)")
	ckptDir := fs.String("checkpoint-dir", "", "write atomic shard checkpoints here (and on SIGINT/SIGTERM)")
	ckptEvery := fs.Duration("checkpoint-interval", live.DefaultCheckpointInterval, "time between checkpoints (> 0)")
	restore := fs.Bool("restore", false, "start from --checkpoint-dir's checkpoint of this shard, if there is one")
	durability := fs.String("durability", live.DurabilityCheckpoint, "what an acknowledged push survives: checkpoint (a killed shard loses the updates since its last checkpoint) | log (a push is acknowledged once a write-ahead log in --checkpoint-dir holds it; --restore replays it)")
	metrics := fs.String("metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz")
	exitDone := fs.Bool("exit-when-done", true, "end with the job: shard 0 evaluates the model at --eval-every and at the end, writes --out/summary.json and model.npz and tells every shard to stop; each checkpoints and exits 0 (false: serve until stopped, as pacer train's own servers do; with --out shard 0 still evaluates and writes both, as a cluster's does)")
	out := fs.String("out", "out/job", "shard 0: directory for the job's summary.json and model.npz (with --exit-when-done=false only when given)")
	maxPending := fs.Int("max-pending", wire.DefaultMaxPending, "connections that have not yet authenticated served at once; more are closed unread and logged (≥ 1)")
	listenFD := fs.Int("listen-fd", -1, "serve on this inherited listening socket (a supervisor's, e.g. pacer train) instead of --listen")
	controlToken := fs.String("control-token", "", "second secret of the control roles (coordinator links, observers), different from the token; every shard needs it, workers never get it (default $PACER_CONTROL_TOKEN; prefer the variable)")
	cmd.RunE = func(*cobra.Command, []string) error {
		return runServer(fs, &jf, &rf, serverFlags{index, listen, peers, ckptDir, ckptEvery, restore, durability, metrics, listenFD, controlToken, maxPending, exitDone, out}, stdout, stderr)
	}
	return cmd
}

// serverFlags are server's own flags, bound by newServerCmd.
type serverFlags struct {
	index                  *int
	listen, peers, ckptDir *string
	ckptEvery              *time.Duration
	restore                *bool
	durability             *string
	metrics                *string
	listenFD               *int
	controlToken           *string
	maxPending             *int
	exitDone               *bool
	out                    *string
}

func runServer(fs *pflag.FlagSet, jf *serverJobFlags, rf *roleFlags, f serverFlags, stdout, stderr io.Writer) error {
	index, listen, peers, ckptDir, ckptEvery, restore, durability, metrics, listenFD, controlToken :=
		f.index, f.listen, f.peers, f.ckptDir, f.ckptEvery, f.restore, f.durability, f.metrics, f.listenFD, f.controlToken
	set := setFlags(fs)
	if err := checkServerFlags(fs, set, *ckptEvery); err != nil {
		return usage(err)
	}
	if err := live.CheckDurability(*durability, *ckptDir); err != nil {
		return usage(err)
	}
	if *f.maxPending < 1 {
		return usage(fmt.Errorf("--max-pending=%d: need at least 1", *f.maxPending))
	}
	env := roles.Env{}
	role, err := env.Role("server")
	if err != nil {
		return usage(err)
	}
	if set["index"] {
		role.Index = *index
	}
	if set["peers"] {
		role.Shards = roles.SplitList(*peers)
	}
	if set["listen"] {
		role.Listen = *listen
	}
	// The cluster's shape fills the job's size when the flags leave it open.
	var workers, shards int
	if !set["workers"] {
		workers = role.Workers
	}
	if !set["shards"] {
		shards = len(role.Shards)
	}
	jf.setShape(workers, shards)
	if role.Index < 0 {
		return usage(errors.New("no shard index: give --index, $PACER_INDEX or TF_CONFIG"))
	}
	if role.Listen == "" {
		role.Listen = fmt.Sprintf("127.0.0.1:%d", 7070+role.Index)
	}
	token, log, tr, err := rf.connection(env, stderr, true)
	if err != nil {
		return usage(err)
	}
	params, err := jf.params(set)
	if err != nil {
		return usage(err)
	}
	if role.Index == 0 && len(role.Shards) != params.Job.Shards {
		return usage(fmt.Errorf("shard 0 hosts the coordinator and needs all %d shard addresses (--peers), got %d", params.Job.Shards, len(role.Shards)))
	}
	ctl := *controlToken
	if ctl == "" {
		ctl = env.ControlToken()
	}
	if ctl == "" {
		return usage(errors.New("no control token: set $PACER_CONTROL_TOKEN (or --control-token) to the job's control secret, the same on every shard and different from $PACER_TOKEN (workers never get it)"))
	}
	if ctl == token {
		return usage(errors.New("the control token must differ from the job token: workers hold the job token, and the control token lets its holder remove workers and stop the job"))
	}
	for _, w := range exposureWarnings(role.Listen, tr.TLS != nil, token) {
		log.Warn(w)
	}
	var ln net.Listener
	if *listenFD >= 0 {
		// The supervisor holds the port across this process's restarts, so
		// no other program can take it in between.
		f := os.NewFile(uintptr(*listenFD), "listener")
		if f == nil {
			return fmt.Errorf("--listen-fd=%d: not an open file", *listenFD)
		}
		ln, err = net.FileListener(f)
		f.Close() // FileListener holds its own descriptor
		if err != nil {
			return fmt.Errorf("--listen-fd=%d: %w", *listenFD, err)
		}
		if tr.TLS != nil {
			ln = tls.NewListener(ln, tr.TLS)
		}
	}
	summary := ""
	// A cluster's shards serve on after the job (their pods restart when
	// they exit), and shard 0 still reports it when given --out.
	if (*f.exitDone || set["out"]) && role.Index == 0 {
		// Checked now, made when the job ends: a server that never gets
		// there leaves no empty directory behind.
		if undo, err := prepareOut(*f.out); err == nil {
			undo()
			summary = *f.out
		} else if set["out"] {
			return usage(err)
		} else {
			log.Warn("the job's summary will not be written (give --out)", "err", err)
		}
	}
	plan, err := launch.Planner(params)
	if err != nil {
		return err
	}
	sv, err := live.NewServer(live.ServerConfig{Index: role.Index, Params: params, Replan: plan, Listen: role.Listen, Listener: ln, Transport: tr, Token: token, ControlToken: ctl,
		ExitWhenDone: *f.exitDone, SummaryDir: summary,
		ShardAddrs: role.Shards, CheckpointDir: *ckptDir, CheckpointInterval: *ckptEvery, Restore: *restore, Durability: *durability,
		MetricsAddr: *metrics, Logger: log, Wire: wire.Config{MaxPending: *f.maxPending}, Init: jf.initW,
		Ready: func(addr string) { fmt.Fprintf(stdout, "pacer: shard %d listening on %s\n", role.Index, addr) }})
	if err != nil {
		return err
	}
	return runUntilSignal(sv.Run, log, stopGrace, repeatWindow)
}

// stopGrace is how long a server may take to stop (its final checkpoint
// included) after SIGINT/SIGTERM before the process exits without it.
const stopGrace = 10 * time.Second

// runUntilSignal runs run until it returns or a signal stops it. After the
// first SIGINT/SIGTERM run gets grace to finish (a server writes its final
// checkpoint); a second signal, or the end of the grace, returns at once,
// so a stop never hangs whatever state the server is in. A signal within
// repeat of the first is the same request delivered twice (sameDelivery).
func runUntilSignal(run func(context.Context) error, log *slog.Logger, grace, repeat time.Duration) error {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	select {
	case err := <-done:
		return err
	case s := <-sig:
		log.Info("stopping", "signal", s.String(), "grace", grace)
		cancel()
	}
	first := time.Now()
	// The event loop: the grace is a guard against a server stuck in any
	// state, the signals are the operator's.
	t := time.NewTimer(grace)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case s := <-sig:
			if sameDelivery(first, time.Now(), repeat) {
				log.Info("the stop signal came twice at once (as timeout(1) sends it to the process and its group): still stopping", "signal", s.String())
				continue
			}
			return fmt.Errorf("second signal (%s): stopped without waiting for the shutdown", s)
		case <-t.C:
			return fmt.Errorf("the server did not stop within %s of the signal; exiting without waiting", grace)
		}
	}
}

// repeatWindow is how soon after the first a stop signal is taken for the
// same request delivered twice: timeout(1) signals its child and then the
// child's process group, microseconds apart, and an operator who means
// "now" presses Ctrl-C again after seeing the "stopping" line, well over a
// second later. A second too long only costs that operator one more press.
const repeatWindow = time.Second

// sameDelivery reports whether a stop signal at now repeats the first one,
// taken at first, rather than asking to skip the shutdown.
func sameDelivery(first, now time.Time, repeat time.Duration) bool { return now.Sub(first) < repeat }

// checkServerFlags refuses the values job.Config would silently replace by
// its defaults (an explicit --workers, --shards or --seed of 0) and a
// checkpoint interval that is not positive.
func checkServerFlags(fs *pflag.FlagSet, set map[string]bool, ckptEvery time.Duration) error {
	for _, name := range []string{"workers", "shards"} {
		if v, err := fs.GetInt(name); set[name] && (err != nil || v < 1) {
			return fmt.Errorf("--%s=%d: need at least 1", name, v)
		}
	}
	if seed, err := fs.GetUint64("seed"); set["seed"] && (err != nil || seed == 0) {
		return errors.New("--seed=0: seeds start at 1")
	}
	if ckptEvery <= 0 {
		return fmt.Errorf("--checkpoint-interval=%s must be positive", ckptEvery)
	}
	return nil
}
