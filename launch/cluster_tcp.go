package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/nsnet"
	"github.com/pacer-ps/pacer/wire"
)

// tcpCluster runs every shard and worker as its own `pacer server` /
// `pacer worker` process on loopback, as they would run across machines.
// The tokens travel in the environment ($PACER_TOKEN, and for the shards
// $PACER_CONTROL_TOKEN), never on a command line another user could read;
// workers never get the control token.
type tcpCluster struct {
	params *job.Description
	desc   []byte // params as JSON, every shard's --job
	opt    *Options
	bin    string
	hosts  []string
	lns    []*net.TCPListener // the shards' sockets, held across restarts
	// net is the emulated network when the job has links (nil: loopback):
	// every shard and worker on a host of its own, the driver's observers
	// on one more, unshaped.
	net *nsnet.Net

	mu       sync.Mutex
	shards   []*shardProc
	workers  []*exec.Cmd
	killed   map[*exec.Cmd]bool
	stopping bool
	wg       sync.WaitGroup
	wkErr    error
	done     chan struct{}
	fail     chan error
	logMu    sync.Mutex
}

// shardProc is one shard process; exited is closed once it has been
// waited for, and err is then its exit status.
type shardProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

func newTCP(p *job.Description, opt *Options) *tcpCluster {
	return &tcpCluster{params: p, opt: opt, done: make(chan struct{}), fail: make(chan error, 1), killed: map[*exec.Cmd]bool{},
		shards: make([]*shardProc, p.Job.Shards), workers: make([]*exec.Cmd, p.Job.Workers)}
}

func (c *tcpCluster) addrs() []string { return c.hosts }

func (c *tcpCluster) transport() wire.Transport {
	if c.net != nil {
		return nsTransport{c.net}
	}
	return wire.TCP{}
}

// exec is argv run as child name: on its own host in an emulated network.
func (c *tcpCluster) exec(name string, argv ...string) *exec.Cmd {
	if c.net != nil {
		return c.net.Command(hostOf(name), argv...)
	}
	return exec.Command(argv[0], argv[1:]...)
}

func (c *tcpCluster) start(ctx context.Context) error {
	c.bin = c.opt.Binary
	var err error
	if c.bin == "" {
		if c.bin, err = os.Executable(); err != nil {
			return fmt.Errorf("launch: tcp mode needs the pacer binary: %w", err)
		}
	}
	if c.desc, err = json.Marshal(c.params); err != nil {
		return fmt.Errorf("launch: the job's description: %w", err)
	}
	host := c.opt.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if l := c.params.Job.Network; l != nil {
		if c.net, err = emulate(l, c.params.Job.Shards, c.params.Job.Workers); err != nil {
			return err
		}
	}
	// The shards' listening sockets are opened here and handed down
	// (--listen-fd), so every address is known before any process starts
	// and stays the same across a restart: no other program can take a
	// port in between (picking a free port and closing it lost that race
	// now and then, and the shard exited). Dials while a shard is down wait
	// in the socket's backlog for its successor.
	for i := range c.params.Job.Shards {
		var ln net.Listener
		var err error
		if c.net != nil {
			ln, err = c.net.Listen(fmt.Sprintf("s%d", i), shardPort)
		} else {
			ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		}
		if err != nil {
			return fmt.Errorf("launch: listening for a shard: %w", err)
		}
		c.lns = append(c.lns, ln.(*net.TCPListener))
		c.hosts = append(c.hosts, ln.Addr().String())
	}
	for i := range c.hosts {
		if err := c.startShard(i, c.opt.Restore); err != nil {
			return err
		}
	}
	for p := range c.params.Job.Workers {
		if err := c.startWorker(p); err != nil {
			return err
		}
	}
	go func() {
		c.wg.Wait()
		close(c.done)
	}()
	return nil
}

// shardPort is every shard's port on an emulated host of its own.
const shardPort = 7070

func (c *tcpCluster) command(name string, args []string) *exec.Cmd {
	cmd := c.exec(name, append([]string{c.bin}, args...)...)
	cmd.Env = append(childEnv(os.Environ()), "PACER_TOKEN="+c.opt.Token)
	if args[0] == "server" {
		cmd.Env = append(cmd.Env, "PACER_CONTROL_TOKEN="+c.opt.ControlToken)
	}
	cmd.SysProcAttr = childAttr()
	w := c.logWriter(name)
	cmd.Stdout, cmd.Stderr = w, w
	return cmd
}

// pythonWorker is worker p as a PyTorch worker process: the same id,
// coordinator and token as a `pacer worker`'s (docs/python.md).
func (c *tcpCluster) pythonWorker(p int) *exec.Cmd {
	args := []string{c.opt.PythonWorker, "--coordinator", c.hosts[0], "--id", strconv.Itoa(p)}
	if d := c.params.Job.DataDir; d != "" {
		args = append(args, "--data-dir", d)
	}
	cmd := c.exec(fmt.Sprintf("worker-%d", p), append([]string{c.opt.PythonBin}, args...)...)
	cmd.Env = pythonEnv(os.Environ(), c.opt.Token, filepath.Dir(c.opt.PythonWorker))
	cmd.SysProcAttr = childAttr()
	w := c.logWriter(fmt.Sprintf("worker-%d", p))
	cmd.Stdout, cmd.Stderr = w, w
	return cmd
}

// blasThreads are the variables that size a BLAS or OpenMP thread pool.
// torch_worker.py's --threads (1) sets torch's own pool only; Debian's
// PyTorch multiplies through OpenBLAS, whose pool is sized at import from
// these variables and otherwise takes every core. The launcher's workers
// share one machine's cores with the shards, so a pool per worker only
// contends: one thread each, as a Go worker computes (issue 35: the MLP's
// backward pass took 1.6× as long with OpenBLAS's default pool).
var blasThreads = []string{"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}

// pythonEnv is a PyTorch worker's environment: env without the control
// token, with the worker token, the pacer package on the path and one BLAS
// thread unless env already sizes the pool (the user's setting wins).
func pythonEnv(env []string, token, pythonPath string) []string {
	out := append(childEnv(env), "PACER_TOKEN="+token, "PYTHONPATH="+pythonPath)
	for _, v := range blasThreads {
		if !hasVar(env, v) {
			out = append(out, v+"=1")
		}
	}
	return out
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// childEnv is env without the tokens: a child gets exactly the ones its
// role needs.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PACER_TOKEN=") && !strings.HasPrefix(kv, "PACER_CONTROL_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}

// logWriter prefixes a child's output lines with its name into Options.Log.
func (c *tcpCluster) logWriter(name string) io.Writer {
	if c.opt.Log == nil {
		return io.Discard
	}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			c.logMu.Lock()
			fmt.Fprintf(c.opt.Log, "[%s] %s\n", name, sc.Text())
			c.logMu.Unlock()
		}
		io.Copy(io.Discard, pr)
	}()
	return pw
}

func (c *tcpCluster) startShard(i int, restore bool) error {
	args := []string{"server", "--index", strconv.Itoa(i), "--listen-fd", "3", "--peers", strings.Join(c.hosts, ","),
		"--log-level", c.opt.LogLevel.String(), "--exit-when-done=false"} // the driver reads the results and stops them
	args = append(args, "--job", string(c.desc))
	if d := c.opt.CheckpointDir; d != "" {
		args = append(args, "--checkpoint-dir", d)
		if c.opt.CheckpointInterval > 0 {
			args = append(args, "--checkpoint-interval", c.opt.CheckpointInterval.String())
		}
	}
	if restore {
		args = append(args, "--restore")
	}
	if c.opt.Durability != "" {
		args = append(args, "--durability", c.opt.Durability)
	}
	if c.opt.MetricsAddr != "" {
		m, err := portPlus(c.opt.MetricsAddr, i)
		if err != nil {
			return err
		}
		args = append(args, "--metrics-addr", m)
	}
	cmd := c.command(fmt.Sprintf("shard-%d", i), args)
	last := &tailBuf{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, last) // its last words, for the error
	lf, err := c.lns[i].File()                    // a duplicate: the child's fd 3
	if err != nil {
		return fmt.Errorf("launch: shard %d's socket: %w", i, err)
	}
	defer lf.Close()
	cmd.ExtraFiles = []*os.File{lf}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("launch: starting shard %d: %w", i, err)
	}
	sp := &shardProc{cmd: cmd, exited: make(chan struct{})}
	c.mu.Lock()
	c.shards[i] = sp
	c.mu.Unlock()
	go func() {
		sp.err = cmd.Wait()
		close(sp.exited)
		// A shard that exits on its own (it could not listen, or refused
		// its checkpoint) is reported, or the job would wait for it.
		c.mu.Lock()
		expected := c.killed[cmd] || c.stopping
		c.mu.Unlock()
		if !expected {
			select {
			case c.fail <- fmt.Errorf("launch: shard %d exited: %v: %s", i, sp.err, last.lastLine()):
			default:
			}
		}
	}()
	return nil
}

func (c *tcpCluster) startWorker(p int) error {
	args := []string{"worker", "--coordinator", c.hosts[0], "--id", strconv.Itoa(p), "--log-level", c.opt.LogLevel.String()}
	if d := c.params.Job.DataDir; d != "" {
		args = append(args, "--data-dir", d)
	}
	var cmd *exec.Cmd
	if p >= c.params.Job.Workers-c.opt.PythonWorkers {
		cmd = c.pythonWorker(p)
	} else {
		cmd = c.command(fmt.Sprintf("worker-%d", p), args)
	}
	last := &tailBuf{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, last) // its last words, for the error
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("launch: starting worker %d: %w", p, err)
	}
	c.mu.Lock()
	c.workers[p] = cmd
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := cmd.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil && !c.killed[cmd] {
			c.wkErr = errors.Join(c.wkErr, fmt.Errorf("worker %d: %w", p, err))
			// It ends the job now, as a shard's would: the others may
			// train on without it, or wait for it, for a long time.
			if !c.stopping {
				select {
				case c.fail <- fmt.Errorf("launch: worker %d exited: %v: %s", p, err, last.lastLine()):
				default:
				}
			}
		}
	}()
	return nil
}

func (c *tcpCluster) kill(cmd *exec.Cmd) error {
	c.mu.Lock()
	c.killed[cmd] = true
	c.mu.Unlock()
	return cmd.Process.Signal(syscall.SIGKILL)
}

func (c *tcpCluster) killWorker(p int, restart bool) error {
	c.mu.Lock()
	cmd := c.workers[p]
	c.mu.Unlock()
	if restart {
		c.wg.Add(1) // held for the replacement
	}
	return c.kill(cmd)
}

func (c *tcpCluster) restartWorker(ctx context.Context, p int) error {
	defer c.wg.Done()
	return c.startWorker(p)
}

// killShard SIGKILLs shard i: no final checkpoint, a real crash.
func (c *tcpCluster) killShard(i int) error {
	c.mu.Lock()
	sp := c.shards[i]
	c.mu.Unlock()
	if err := c.kill(sp.cmd); err != nil {
		return err
	}
	<-sp.exited
	return nil
}

func (c *tcpCluster) restartShard(ctx context.Context, i int) error { return c.startShard(i, true) }

// pauseShard stops shard i (SIGSTOP): the process lives on, holding its
// connections, and answers nothing until resumeShard.
func (c *tcpCluster) pauseShard(i int) error { return c.signalShard(i, syscall.SIGSTOP) }

func (c *tcpCluster) resumeShard(i int) error { return c.signalShard(i, syscall.SIGCONT) }

func (c *tcpCluster) signalShard(i int, s syscall.Signal) error {
	c.mu.Lock()
	sp := c.shards[i]
	c.mu.Unlock()
	select {
	case <-sp.exited:
		return fmt.Errorf("shard %d has exited", i)
	default:
	}
	return sp.cmd.Process.Signal(s)
}

// duplicateWorker starts a second process under worker p's id. The newer
// connection takes the id, and the displaced process is told so and exits
// with an error naming the id: expected here, as a killed one's exit is.
func (c *tcpCluster) duplicateWorker(p int) error {
	c.mu.Lock()
	old := c.workers[p]
	c.killed[old] = true
	c.mu.Unlock()
	return c.startWorker(p)
}

func (c *tcpCluster) workersDone() <-chan struct{} { return c.done }

func (c *tcpCluster) failed() <-chan error { return c.fail }

func (c *tcpCluster) workersErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wkErr
}

// stop kills leftover workers, then asks each shard to stop with SIGTERM
// (it writes its final checkpoint) and waits up to 15 s before SIGKILL.
func (c *tcpCluster) stop() error {
	c.mu.Lock()
	c.stopping = true
	workers := append([]*exec.Cmd(nil), c.workers...)
	shards := append([]*shardProc(nil), c.shards...)
	c.mu.Unlock()
	for _, w := range workers {
		if w != nil {
			c.kill(w) // an exited one just refuses the signal
		}
	}
	var errs error
	for i, s := range shards {
		if s == nil {
			continue
		}
		c.mu.Lock()
		dead := c.killed[s.cmd]
		c.mu.Unlock()
		if dead {
			continue
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
			if s.err != nil {
				errs = errors.Join(errs, fmt.Errorf("shard %d: %w", i, s.err))
			}
		case <-time.After(15 * time.Second): // a guard: a shard hung past its final checkpoint is killed, not waited for
			s.cmd.Process.Kill()
			<-s.exited
			errs = errors.Join(errs, fmt.Errorf("shard %d did not stop within 15 s of SIGTERM", i))
		}
	}
	for _, ln := range c.lns {
		ln.Close()
	}
	if c.net != nil {
		if err := c.net.Close(); err != nil {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// tailBuf keeps the last bytes a child wrote.
type tailBuf struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > 1024 {
		t.b = append(t.b[:0], t.b[len(t.b)-1024:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

// lastLine is the last non-empty line written.
func (t *tailBuf) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return lines[len(lines)-1]
}
