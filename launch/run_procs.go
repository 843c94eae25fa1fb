package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// This file: pacer run's processes: their output, prefixed by name, and
// how each shard and worker starts.

// output is a process's log file under Out, and with show its lines,
// prefixed with its name, on the run's Output.
func (r *runner) output(p *runProc, show bool) (io.Writer, error) {
	f, err := os.Create(filepath.Join(r.out, p.name+".log"))
	if err != nil {
		return nil, fmt.Errorf("launch: %s's log: %w", p.name, err)
	}
	p.log = f
	ws := []io.Writer{f, p.last}
	if show && r.rc.Output != nil {
		ws = append(ws, &prefixed{mu: &r.outMu, w: r.rc.Output, name: p.name})
	}
	return io.MultiWriter(ws...), nil
}

// prefixed writes whole lines to w, each after its process's name; the
// processes share mu, so their lines never interleave mid-line.
type prefixed struct {
	mu   *sync.Mutex
	w    io.Writer
	name string
	part []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		p.mu.Lock()
		fmt.Fprintf(p.w, "[%s] %s\n", p.name, p.part[:i])
		p.mu.Unlock()
		p.part = p.part[i+1:]
	}
	return len(b), nil
}

func (r *runner) start(p *runProc, show bool) error {
	w, err := r.output(p, show)
	if err != nil {
		return err
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.cmd.SysProcAttr = childAttr()
	if err := p.cmd.Start(); err != nil {
		p.log.Close()
		return fmt.Errorf("launch: starting %s: %w", p.name, err)
	}
	r.procs = append(r.procs, p)
	go func() {
		err := p.cmd.Wait()
		p.log.Close()
		r.exits <- procExit{p, err}
	}()
	return nil
}

// startWorker starts worker p of the user's command, its rank and the
// job's whereabouts in its environment (init: worker 0's PACER_INIT_FILE).
func (r *runner) startWorker(p int, init string) error {
	k := strconv.Itoa(r.rc.Job.Workers)
	id := strconv.Itoa(p)
	cmd := exec.Command(r.rc.Command[0], r.rc.Command[1:]...)
	cmd.Env = append(childEnv(os.Environ()), "PACER_TOKEN="+r.token, EnvCoordinator+"="+r.addrs[0],
		EnvWorkerID+"="+id, EnvWorkers+"="+k, "RANK="+id, "WORLD_SIZE="+k, "LOCAL_RANK="+id, "LOCAL_WORLD_SIZE="+k,
		"PYTHONUNBUFFERED=1") // the workers' lines reach the log as they are printed
	cmd.Env = slicesDeleteEnv(cmd.Env, EnvInitFile)
	if init != "" {
		cmd.Env = append(cmd.Env, EnvInitFile+"="+init)
	}
	return r.start(&runProc{name: fmt.Sprintf("worker-%d", p), cmd: cmd, last: &tailBuf{}}, true)
}

// slicesDeleteEnv is env without name's entries: only worker 0 writes
// the initial weights, whatever the caller's environment says.
func slicesDeleteEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func (r *runner) startShard(i int, desc, init string) error {
	args := []string{"server", "--index", strconv.Itoa(i), "--listen-fd", "3", "--peers", strings.Join(r.addrs, ","),
		"--log-level", r.rc.LogLevel.String(), "--job", desc, "--init", init, "--checkpoint-dir", r.ckptDir, "--out", r.out}
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(childEnv(os.Environ()), "PACER_TOKEN="+r.token, "PACER_CONTROL_TOKEN="+r.ctl)
	lf, err := r.lns[i].File() // a duplicate: the child's fd 3
	if err != nil {
		return fmt.Errorf("launch: shard %d's socket: %w", i, err)
	}
	defer lf.Close()
	cmd.ExtraFiles = []*os.File{lf}
	return r.start(&runProc{name: fmt.Sprintf("shard-%d", i), cmd: cmd, last: &tailBuf{}}, r.rc.Verbose)
}

// exited is the error a process's exit ends the run with (nil: exit 0).
func exited(e procExit) error {
	if e.err == nil {
		return nil
	}
	return fmt.Errorf("launch: %s exited: %v: %s", e.p.name, e.err, e.p.last.lastLine())
}
