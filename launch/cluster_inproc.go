package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/wire"
)

// inproc runs the job as goroutines over wire.Inproc: the same servers,
// coordinator and workers as tcp mode, with the same framing, token and
// checks, in one process. A killed worker or shard has its context
// cancelled, which closes its connections as a crash would.
type inproc struct {
	params *job.Description
	opt    *Options
	ds     *data.Dataset
	tr     *wire.Inproc
	log    *slog.Logger
	names  []string

	mu       sync.Mutex
	ctx      context.Context
	srvStop  []context.CancelFunc
	srvDone  []chan error
	wkStop   []context.CancelFunc
	wkWG     sync.WaitGroup
	wkErr    error
	done     chan struct{}
	doneOnce sync.Once
	fail     chan error
}

func newInproc(p *job.Description, opt *Options, ds *data.Dataset) *inproc {
	c := &inproc{params: p, opt: opt, ds: ds, tr: &wire.Inproc{}, done: make(chan struct{}), fail: make(chan error, 1), log: newLogger(opt.Log, opt.LogLevel)}
	for i := 0; i < p.Job.Shards; i++ {
		c.names = append(c.names, fmt.Sprintf("shard-%d", i))
	}
	c.srvStop = make([]context.CancelFunc, p.Job.Shards)
	c.srvDone = make([]chan error, p.Job.Shards)
	c.wkStop = make([]context.CancelFunc, p.Job.Workers)
	return c
}

func (c *inproc) addrs() []string           { return c.names }
func (c *inproc) transport() wire.Transport { return c.tr }

func (c *inproc) start(ctx context.Context) error {
	// The servers and workers outlive the job's context: when it ends
	// (Ctrl-C), the driver still reads the counters and the weights, then
	// stop ends them, as tcp mode's processes.
	c.ctx = context.WithoutCancel(ctx)
	for i := range c.names {
		if err := c.startShard(i, c.opt.Restore); err != nil {
			return err
		}
	}
	for p := 0; p < c.params.Job.Workers; p++ {
		c.startWorker(p)
	}
	go func() {
		c.wkWG.Wait()
		c.doneOnce.Do(func() { close(c.done) })
	}()
	return nil
}

func (c *inproc) startShard(i int, restore bool) error {
	ln, err := c.tr.Listen(c.names[i])
	if err != nil {
		return err
	}
	metrics := ""
	if c.opt.MetricsAddr != "" {
		if metrics, err = portPlus(c.opt.MetricsAddr, i); err != nil {
			ln.Close()
			return err
		}
	}
	plan, err := Planner(c.params)
	if err != nil {
		ln.Close()
		return err
	}
	sv, err := live.NewServer(live.ServerConfig{Index: i, Params: c.params, Replan: plan, Listener: ln, Transport: c.tr, Token: c.opt.Token, ControlToken: c.opt.ControlToken,
		ShardAddrs: c.names, CheckpointDir: c.opt.CheckpointDir, CheckpointInterval: c.opt.CheckpointInterval,
		Restore: restore, Durability: c.opt.Durability, MetricsAddr: metrics, Logger: c.log.With("proc", c.names[i])})
	if err != nil {
		ln.Close()
		return err
	}
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan error, 1)
	c.mu.Lock()
	c.srvStop[i], c.srvDone[i] = cancel, done
	c.mu.Unlock()
	go func() {
		err := sv.Run(ctx)
		if ctx.Err() == nil {
			// Stopped on its own: the job would wait for it forever.
			select {
			case c.fail <- fmt.Errorf("launch: shard %d stopped: %v", i, err):
			default:
			}
		}
		done <- err
	}()
	return nil
}

func (c *inproc) startWorker(p int) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.wkStop[p] = cancel
	c.mu.Unlock()
	c.wkWG.Add(1)
	go func() {
		defer c.wkWG.Done()
		_, err := worker.Run(ctx, worker.Config{Coordinator: c.names[0], Transport: c.tr, Token: c.opt.Token, ID: p,
			Data: c.ds, Logger: c.log.With("proc", fmt.Sprintf("worker-%d", p))})
		if err != nil && ctx.Err() == nil {
			c.mu.Lock()
			c.wkErr = errors.Join(c.wkErr, fmt.Errorf("worker %d: %w", p, err))
			c.mu.Unlock()
		}
	}()
}

func (c *inproc) killWorker(p int, restart bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if restart {
		c.wkWG.Add(1) // held for the replacement, so "all workers done" cannot fire in between
	}
	c.wkStop[p]()
	return nil
}

func (c *inproc) restartWorker(ctx context.Context, p int) error {
	c.startWorker(p)
	c.wkWG.Done()
	return nil
}

// killShard stops shard i without its final checkpoint being the point:
// it writes one, as a graceful stop does; tcp mode's SIGKILL is the crash.
func (c *inproc) killShard(i int) error {
	c.mu.Lock()
	stop, done := c.srvStop[i], c.srvDone[i]
	c.mu.Unlock()
	stop()
	done <- <-done // leave the result for stop()
	return nil
}

func (c *inproc) restartShard(ctx context.Context, i int) error { return c.startShard(i, true) }

func (c *inproc) workersDone() <-chan struct{} { return c.done }

func (c *inproc) failed() <-chan error { return c.fail }

func (c *inproc) workersErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wkErr
}

func (c *inproc) stop() error {
	c.mu.Lock()
	for _, s := range c.wkStop {
		if s != nil {
			s()
		}
	}
	c.mu.Unlock()
	c.wkWG.Wait()
	var errs error
	for i := range c.srvStop {
		c.mu.Lock()
		stop, done := c.srvStop[i], c.srvDone[i]
		c.mu.Unlock()
		if stop == nil {
			continue
		}
		stop()
		if err := <-done; err != nil {
			errs = errors.Join(errs, fmt.Errorf("shard %d: %w", i, err))
		}
		done <- nil // a second stop finds it finished
	}
	return errs
}

// The faults of processes (Fault.Stop, Fault.Duplicate) are refused before
// an inproc job starts (Train): its servers and workers share one process.
func (c *inproc) pauseShard(i int) error {
	return errors.New("launch: inproc: no shard process to stop")
}
func (c *inproc) resumeShard(i int) error {
	return errors.New("launch: inproc: no shard process to resume")
}
func (c *inproc) duplicateWorker(i int) error {
	return errors.New("launch: inproc: no worker process to duplicate")
}
