package live

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestServerProcessStopsPromptly (issue 14): a `pacer server` process with
// a worker connection stopped in the middle of a push's payload, a pull
// waiting for a version far ahead, refused frames and an idle observer
// stops within its grace of SIGTERM, writing its final checkpoint: a stop
// that waited for a connection would run out the grace, and the process
// would exit non-zero saying so.
func TestServerProcessStopsPromptly(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(pacerBin, "server", "--index", "1", "--shards", "2", "--workers", "3", "--paradigm", "asp",
		"--model", "mlp", "--dataset", "synthetic", "--train-n", "320", "--listen", "127.0.0.1:0", "--checkpoint-dir", dir)
	cmd.Env = append(childEnv(os.Environ()), "PACER_TOKEN=secret", "PACER_CONTROL_TOKEN=control-secret")
	cmd.SysProcAttr = childAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "listening on "); i >= 0 {
				lines <- sc.Text()[i+len("listening on "):]
			}
		}
	}()
	var addr string
	select {
	case addr = <-lines:
	case <-time.After(waitGuard): // a guard: the line comes when the server listens
		t.Fatalf("the server did not start: %s", stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: 0}}
	cc.Token = "secret"
	w, err := wire.Dial(ctx, wire.TCP{}, addr, cc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var si proto.ShardInfo
	if err := w.HelloOK().JSON(&si); err != nil {
		t.Fatal(err)
	}
	var resp wire.Frame
	if err := w.Call(ctx, &wire.Frame{Type: wire.MsgPull, Shard: 1, Worker: 0, Extra: 50}, &resp); err != nil || resp.Flags&proto.FlagPending == 0 {
		t.Fatalf("a pull for a later version: %v, flags %#x; want pending", err, resp.Flags)
	}
	w.Send(ctx, &wire.Frame{Type: wire.MsgHeartbeat, Shard: 1, Worker: 0, Tag: 1 << 63})
	obs := wire.ClientConfig{Hello: proto.ControlHello(proto.RoleObserver, "control-secret", nil)}
	obs.Token = "secret"
	o, err := wire.Dial(ctx, wire.TCP{}, addr, obs)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// A raw worker connection that stops inside a push's payload.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hello, _ := json.Marshal(wire.Hello{Token: "secret", Role: proto.RoleWorker, Worker: 1})
	b, err := wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgHello, ReqID: 1, Bytes: hello}, 0)
	if err != nil {
		t.Fatal(err)
	}
	push, err := wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgPush, ReqID: 2, Shard: 1, Worker: 1, Floats: make([]float32, si.Hi-si.Lo)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Write(b); err != nil {
		t.Fatal(err)
	}
	// Once the hello is answered, the connection's reader goes on to the
	// next frame: half a push, where it blocks (in the header's read or
	// the payload's, as the scheduler has it; the stop waits for neither).
	var ok wire.Frame
	if err := wire.NewReader(raw, 4096, 0).ReadFrame(&ok); err != nil || ok.Type != wire.MsgHelloOK {
		t.Fatalf("the raw worker's hello: %s %v", ok.Type, err)
	}
	if _, err := raw.Write(push[:len(push)/2]); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred Kill's wait
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(waitGuard): // a guard: the server's own grace ends its stop
		t.Fatalf("the server had not exited %s after SIGTERM\n%s", waitGuard, stderr.String())
	}
	t.Logf("stopped %s after SIGTERM", time.Since(t0).Round(time.Millisecond))
	if _, err := os.Stat(ckpt.Path(dir, 1)); err != nil {
		entries, _ := os.ReadDir(dir)
		t.Errorf("no final checkpoint: %v (dir has %v)", err, entries)
	}
}
