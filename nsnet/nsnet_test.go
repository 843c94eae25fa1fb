package nsnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestHostsChecked(t *testing.T) {
	for _, hs := range [][]Host{
		nil,
		{{Name: ""}},
		{{Name: "a b"}},
		{{Name: "waytoolongname"}},
		{{Name: "a"}, {Name: "a"}},
		{{Name: "a", Link: Link{Rate: -1}}},
		{{Name: "a", Link: Link{Rate: 10}}},
		{{Name: "a", Link: Link{Latency: -time.Second}}},
	} {
		if n, err := New(hs); err == nil || errors.Is(err, ErrUnsupported) {
			n.Close()
			t.Errorf("New(%+v) = %v: want a refusal of the hosts", hs, err)
		}
	}
}

// newNet skips where namespaces cannot be made.
func newNet(t *testing.T, hosts []Host) *Net {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	n, err := New(hosts)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// send moves size bytes from host from to ln and returns how long the
// receiver took to read them all.
func send(t *testing.T, n *Net, from string, addr string, size int) error {
	c, err := n.Dial(context.Background(), from, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(make([]byte, size))
	return err
}

// receive accepts k connections on ln and reads each to its end; it
// returns when all are read.
func receive(ln net.Listener, k int) (int64, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int64
	var first error
	for range k {
		c, err := ln.Accept()
		if err != nil {
			return total, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			m, err := io.Copy(io.Discard, c)
			mu.Lock()
			total += m
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, first
}

// A shaped link is as slow as its rate: 6 MB into a 20 MB/s link takes at
// least 0.3 s (less would mean the shaper is not there), whoever sends;
// two senders into it share it (the incast the model charges).
func TestLinksShaped(t *testing.T) {
	const rate, size = 20e6, 6 << 20
	n := newNet(t, []Host{{Name: "slow", Link: Link{Rate: rate}}, {Name: "a"}, {Name: "b"}})
	for _, h := range []string{"slow", "a", "b"} {
		if !strings.HasPrefix(n.Addr(h), "10.77.") {
			t.Fatalf("host %s's address %q", h, n.Addr(h))
		}
	}
	out, err := n.Command("a", "ip", "-o", "-4", "addr", "show", "dev", "eth0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), n.Addr("a")+"/16") {
		t.Fatalf("host a's eth0: %v: %s", err, out)
	}
	ln, err := n.Listen("slow", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, senders := range [][]string{{"a"}, {"a", "b"}} {
		start := time.Now()
		errc := make(chan error, len(senders))
		for _, s := range senders {
			go func() { errc <- send(t, n, s, ln.Addr().String(), size) }()
		}
		got, err := receive(ln, len(senders))
		took := time.Since(start)
		for range senders {
			if e := <-errc; e != nil {
				t.Fatal(e)
			}
		}
		if err != nil || got != int64(len(senders)*size) {
			t.Fatalf("received %d of %d bytes: %v", got, len(senders)*size, err)
		}
		floor := time.Duration(float64(len(senders)*size) / rate * 0.9 * float64(time.Second))
		t.Logf("%d sender(s): %d bytes in %v through a %.0f MB/s link (floor %v)", len(senders), got, took, rate/1e6, floor)
		if took < floor {
			t.Errorf("%d sender(s): %d bytes in %v: faster than the link's rate allows (%v)", len(senders), got, took, floor)
		}
	}
	// Unshaped hosts talk at the veth's own speed.
	lb, err := n.Listen("b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	start := time.Now()
	go send(t, n, "a", lb.Addr().String(), size)
	if got, err := receive(lb, 1); err != nil || got != size {
		t.Fatalf("a → b: %d bytes: %v", got, err)
	}
	t.Logf("unshaped a → b: %d bytes in %v", size, time.Since(start))
}

func TestCloseRemovesEverything(t *testing.T) {
	n := newNet(t, []Host{{Name: "x", Link: Link{Rate: 1e8}}})
	ns := n.Namespace("x")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), ns) || strings.Contains(string(out), strings.TrimSuffix(ns, "x")+"hub") {
		t.Fatalf("namespaces left after Close:\n%s", out)
	}
}

// A child started with a parent-death signal outlives the namespace
// switches of Listen and Dial: the threads they switch are switched back,
// not ended (an ended thread that had started the child killed it, and a
// launcher's shards with it).
func TestSwitchesKeepChildren(t *testing.T) {
	n := newNet(t, []Host{{Name: "a"}, {Name: "b"}})
	child := exec.Command("sleep", "30")
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	defer child.Process.Kill()
	ln, err := n.Listen("b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// Many switches on many threads (a sleeping goroutine beside them
	// keeps the runtime moving goroutines between threads).
	for i := range 200 {
		c, err := n.Dial(context.Background(), "a", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		c.Close()
	}
	select {
	case err := <-exited:
		t.Fatalf("the child died during the switches: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

// A Net that fails partway (here a latency on a kernel without netem, or
// anything else) leaves nothing behind; with netem it is made.
func TestFailedNewLeavesNothing(t *testing.T) {
	if err := Check(); err != nil {
		t.Skip(err)
	}
	before, _ := exec.Command("ip", "netns", "list").Output()
	n, err := New([]Host{{Name: "a"}, {Name: "b", Link: Link{Rate: 1e8, Latency: time.Millisecond}}})
	if err == nil {
		n.Close()
		t.Skip("this kernel has netem: the latency was applied")
	}
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "netem") {
		t.Errorf("a latency without netem: %v", err)
	}
	after, _ := exec.Command("ip", "netns", "list").Output()
	if string(after) != string(before) {
		t.Errorf("namespaces before:\n%s\nafter the failed New:\n%s", before, after)
	}
}

// Netem answers as New does: a link latency is refused exactly where
// Netem says this kernel cannot add one, and the probe leaves nothing.
func TestNetemAgreesWithNew(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	probe := Netem()
	// Other processes' tests may make namespaces meanwhile: only this
	// one's count.
	out, _ := exec.Command("ip", "netns", "list").Output()
	if mine := fmt.Sprintf("%s%d-", namePrefix, os.Getpid()); strings.Contains(string(out), mine) {
		t.Errorf("namespaces of this process left after the probe:\n%s", out)
	}
	if probe != nil && (!errors.Is(probe, ErrUnsupported) || !strings.Contains(probe.Error(), "netem")) {
		t.Errorf("Netem() = %v: want ErrUnsupported naming netem", probe)
	}
	n, err := New([]Host{{Name: "a", Link: Link{Rate: 1e8, Latency: time.Millisecond}}})
	if err == nil {
		n.Close()
	}
	t.Logf("Netem: %v; New with a latency: %v", probe, err)
	if (probe == nil) != (err == nil) {
		t.Errorf("Netem() = %v but New with a latency gave %v: want both to allow it or both to refuse", probe, err)
	}
}

// Flows into one link share it fairly, as the model's links do: four
// senders of 2.6 MB each into a 100 Mbit/s link end together, after about
// 4 × 2.6 MB at the rate. (One first-in first-out queue for the link let
// the first of them end after half that to 80% of it.)
func TestLinkSharedFairly(t *testing.T) {
	const rate, size = 12.5e6, 2_600_000
	senders := []string{"a", "b", "c", "d"}
	hosts := []Host{{Name: "s", Link: Link{Rate: rate}}}
	for _, h := range senders {
		hosts = append(hosts, Host{Name: h, Link: Link{Rate: rate}})
	}
	n := newNet(t, hosts)
	ln, err := n.Listen("s", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Connected first, then all sending at once: the shares are measured,
	// not the dials.
	var conns []net.Conn
	for _, h := range senders {
		c, err := n.Dial(context.Background(), h, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	ends := make(chan int, len(senders)) // bytes read, when a flow ends
	var readers sync.WaitGroup
	for range senders {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		readers.Add(1)
		go func() {
			defer readers.Done()
			buf := make([]byte, 64<<10)
			got := 0
			for got < size {
				k, err := c.Read(buf)
				got += k
				if err != nil {
					break
				}
			}
			ends <- got
		}()
	}
	start := time.Now()
	errc := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			_, err := c.Write(make([]byte, size))
			errc <- err
		}()
	}
	var first, last time.Duration
	for i := range senders {
		if got := <-ends; got != size {
			t.Fatalf("a receiver read %d of %d bytes", got, size)
		}
		took := time.Since(start)
		if i == 0 {
			first = took
		}
		last = took
	}
	readers.Wait()
	for range conns {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	fair := time.Duration(float64(len(senders)*size) / rate * float64(time.Second))
	t.Logf("four flows into one link: the first ended after %v, the last after %v (fair sharing: all at %v)", first, last, fair)
	if first < fair*85/100 {
		t.Errorf("the first of four flows ended after %v, the last after %v: want all near %v (a fair share each)", first, last, fair)
	}
}
