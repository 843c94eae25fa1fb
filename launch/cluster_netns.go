package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/nsnet"
)

// This file: a tcp job's emulated network: its hosts as Linux network
// namespaces (package nsnet) and the transport that dials into them.

// nsTransport dials from the observers' host of an emulated network.
type nsTransport struct{ n *nsnet.Net }

func (t nsTransport) Listen(addr string) (net.Listener, error) {
	return nil, errors.New("launch: the driver listens on no emulated host")
}

func (t nsTransport) Dial(ctx context.Context, addr string) (net.Conn, error) {
	return t.n.Dial(ctx, observerHost, addr)
}

const observerHost = "driver"

// VethLatency is the one-way latency an emulated link has without netem,
// the veth's own (measured about 20-60 µs on a loaded 2-core machine): a
// link latency at or below it is left to the veth, a larger one is added
// with netem where the kernel has it.
const VethLatency = 100 * time.Microsecond

// emulate makes the emulated network of the job's links: shard i is host
// "s<i>", worker p "w<p>", each with its link from spec.
func emulate(spec *network.Spec, shards, workers int) (*nsnet.Net, error) {
	link := func(l network.Link) nsnet.Link {
		out := nsnet.Link{Rate: l.Rate}
		if l.Latency > VethLatency {
			out.Latency = l.Latency
		}
		return out
	}
	hosts := []nsnet.Host{{Name: observerHost}}
	for i := range shards {
		l, ok := spec.Shards[i]
		if !ok {
			l = spec.Default
		}
		hosts = append(hosts, nsnet.Host{Name: fmt.Sprintf("s%d", i), Link: link(l)})
	}
	for p := range workers {
		l, ok := spec.Workers[p]
		if !ok {
			l = spec.Default
		}
		hosts = append(hosts, nsnet.Host{Name: fmt.Sprintf("w%d", p), Link: link(l)})
	}
	n, err := nsnet.New(hosts)
	if err != nil {
		return nil, fmt.Errorf("launch: the job's links are emulated in network namespaces: %w", err)
	}
	return n, nil
}

// hostOf is the emulated host of a child named as logWriter names it.
func hostOf(name string) string {
	if i, ok := strings.CutPrefix(name, "shard-"); ok {
		return "s" + i
	}
	return "w" + strings.TrimPrefix(name, "worker-")
}
