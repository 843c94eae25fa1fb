//go:build linux

package live

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/runstats"
)

// This file: a live job across Linux network namespaces, one per shard
// and worker, each with its own address on a bridge in a namespace of its
// own, the roles given by TF_CONFIG as a Kubeflow TFJob sets it (issue 12,
// item 4). Every namespace, link and address is the test's own and goes
// with it; no traffic reaches the host's network.

// netnsJob is the job both runs train: BSP, so that the two runs make the
// same updates whatever the network's timing, and 2,048 samples × 2 epochs
// in batches of 32, 128 pushes: whole rounds of 2 workers (with an odd
// count the job's end may or may not complete the last round).
var netnsJob = []string{"--shards", "2", "--workers", "2", "--paradigm", "bsp", "--model", "mlp", "--dataset", "fashion-mnist",
	"--train-limit", "2048", "--test-limit", "500", "--epochs", "2", "--batch", "32", "--lr", "0.05", "--eval-every", "1", "--seed", "3"}

// netns makes and removes the test's namespaces.
type netns struct {
	t      *testing.T
	prefix string
	made   []string
}

func (n *netns) ip(args ...string) {
	n.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func (n *netns) add(name string) string {
	ns := n.prefix + name
	n.ip("netns", "add", ns)
	n.made = append(n.made, ns)
	n.ip("-n", ns, "link", "set", "lo", "up")
	return ns
}

// host makes a namespace for one role, linked to the hub's bridge by a
// veth pair, with addr (a /24 on the bridge's subnet).
func (n *netns) host(name, hub, addr string) string {
	ns := n.add(name)
	v := "v-" + name
	n.ip("-n", hub, "link", "add", v, "type", "veth", "peer", "name", "eth0", "netns", ns)
	n.ip("-n", hub, "link", "set", v, "master", "br0", "up")
	n.ip("-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
	n.ip("-n", ns, "link", "set", "eth0", "up")
	return ns
}

func (n *netns) cleanup() {
	for _, ns := range n.made {
		exec.Command("ip", "netns", "del", ns).Run() // removes its links with it
	}
}

// nsJob is a job of pacer server and pacer worker processes; start
// wraps each command (in a namespace, or not).
type nsJob struct {
	t     *testing.T
	procs []*nsProc
}

type nsProc struct {
	name string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan error
}

func (h *nsJob) start(name string, env []string, argv ...string) {
	p := &nsProc{name: name, cmd: exec.Command(argv[0], argv[1:]...), log: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = env
	p.cmd.SysProcAttr = childAttr()
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	h.procs = append(h.procs, p)
}

// wait waits for every process to exit 0 within limit and returns the
// summary shard 0 wrote to out.
func (h *nsJob) wait(out string, limit time.Duration) runstats.Run {
	h.t.Helper()
	defer func() {
		for _, p := range h.procs {
			p.cmd.Process.Kill() // whatever still runs (a failure)
		}
	}()
	deadline := time.After(limit) // a guard: the processes end the job by themselves
	for _, p := range h.procs {
		select {
		case err := <-p.done:
			if err != nil {
				h.t.Fatalf("%s exited: %v\n%s", p.name, err, p.log.String())
			}
		case <-deadline:
			for _, q := range h.procs {
				h.t.Logf("%s:\n%s", q.name, q.log.String())
			}
			h.t.Fatalf("%s still running %s after the start", p.name, limit)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		h.t.Fatalf("no summary.json: %v\n%s", err, h.procs[0].log.String())
	}
	var r runstats.Run
	if err := json.Unmarshal(b, &r); err != nil {
		h.t.Fatal(err)
	}
	return r
}

func TestJobAcrossNamespaces(t *testing.T) {
	skipUnderRace(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces (ip netns add); run the tests as root to include it")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip (apt-get install iproute2)")
	}
	n := &netns{t: t, prefix: fmt.Sprintf("pacer%d-", os.Getpid()%100000)}
	if out, err := exec.Command("ip", "netns", "add", n.prefix+"probe").CombinedOutput(); err != nil {
		t.Skipf("this machine does not let root make network namespaces: %v: %s", err, out)
	}
	n.made = append(n.made, n.prefix+"probe")
	t.Cleanup(n.cleanup)
	hub := n.add("hub")
	n.ip("-n", hub, "link", "add", "br0", "type", "bridge")
	n.ip("-n", hub, "link", "set", "br0", "up")
	ps := []string{"10.211.0.1:7070", "10.211.0.2:7070"}
	workers := []string{"10.211.0.11:7070", "10.211.0.12:7070"}
	cluster, _ := json.Marshal(map[string][]string{"ps": ps, "worker": workers})
	tfConfig := func(typ string, i int) string {
		return fmt.Sprintf(`TF_CONFIG={"cluster":%s,"task":{"type":%q,"index":%d}}`, cluster, typ, i)
	}
	base := append(childEnv(os.Environ()), "PACER_TOKEN=secret", "PACER_CONTROL_TOKEN=control-secret")
	dir := t.TempDir()

	// Across namespaces: the roles, addresses and ports come from TF_CONFIG
	// alone, as in a TFJob's pods.
	out := filepath.Join(dir, "netns")
	across := &nsJob{t: t}
	for i, a := range ps {
		ns := n.host(fmt.Sprintf("s%d", i), hub, strings.Split(a, ":")[0])
		args := append([]string{"ip", "netns", "exec", ns, pacerBin, "server", "--out", out, "--log-level", "info"}, netnsJob...)
		across.start(fmt.Sprintf("shard-%d", i), append(append([]string{}, base...), tfConfig("ps", i)), args...)
	}
	for w, a := range workers {
		ns := n.host(fmt.Sprintf("w%d", w), hub, strings.Split(a, ":")[0])
		across.start(fmt.Sprintf("worker-%d", w), append(append([]string{}, base...), tfConfig("worker", w)),
			"ip", "netns", "exec", ns, pacerBin, "worker", "--connect-timeout", "60s")
	}
	rn := across.wait(out, 150*time.Second)

	// The same job on loopback, started by hand.
	out = filepath.Join(dir, "loopback")
	addrs := freeAddrs(t, 2)
	local := &nsJob{t: t}
	for i := range addrs {
		args := append([]string{pacerBin, "server", "--index", fmt.Sprint(i), "--peers", strings.Join(addrs, ","), "--listen", addrs[i],
			"--out", out}, netnsJob...)
		local.start(fmt.Sprintf("shard-%d", i), base, args...)
	}
	for w := range 2 {
		local.start(fmt.Sprintf("worker-%d", w), base, pacerBin, "worker", "--coordinator", addrs[0], "--id", fmt.Sprint(w), "--connect-timeout", "60s")
	}
	rl := local.wait(out, 150*time.Second)

	t.Logf("across namespaces: %d pushes, %d updates, final accuracy %.4f in %.2f s", rn.Pushes, rn.Updates, rn.FinalAccuracy, rn.Seconds)
	t.Logf("on loopback:       %d pushes, %d updates, final accuracy %.4f in %.2f s", rl.Pushes, rl.Updates, rl.FinalAccuracy, rl.Seconds)
	if rn.Workers != 2 || rn.Shards != 2 || rn.Paradigm != "bsp" || rn.Updates == 0 {
		t.Fatalf("the namespaced job's summary %+v: want a 2-worker, 2-shard BSP job that trained", rn)
	}
	// Updates and weights must match; a push that races the job's end is
	// counted but applies nothing (the coordinator's done path), so pushes
	// may exceed the job's 128 by one on either side.
	if rn.Updates != rl.Updates || rn.FinalAccuracy != rl.FinalAccuracy || rn.Pushes < 128 || rn.Pushes > 129 || rl.Pushes < 128 || rl.Pushes > 129 {
		t.Errorf("across namespaces %d pushes, %d updates, accuracy %v; on loopback %d, %d, %v: BSP makes the same updates on any network",
			rn.Pushes, rn.Updates, rn.FinalAccuracy, rl.Pushes, rl.Updates, rl.FinalAccuracy)
	}
}
