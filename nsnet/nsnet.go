// Package nsnet runs processes as if on separate hosts of one switched
// network with links of a given speed: each host is a Linux network
// namespace joined by a veth pair to a bridge in a hub namespace of its
// own, and each host's link is rate-limited in both directions by the
// kernel's hierarchical token bucket (tc htb), shared fairly among the
// hosts it talks to, so that transfers queue at a slow link as they would
// at a real one (a shard's link shared by every worker's push is the
// incast of a synchronous round). Nothing touches the machine's own
// network: every namespace, link and address belongs to a Net and goes
// with Close.
//
// It needs Linux, root, and iproute2's ip and tc (Check says which is
// missing). A link latency needs the netem queueing discipline, which some
// kernels lack; New refuses one there, naming the missing module.
package nsnet

import (
	"errors"
	"fmt"
	"time"
)

// Link is one host's connection to the switch.
type Link struct {
	// Rate is the link's speed in bytes per second, each way; 0 leaves
	// the veth's own (several GB/s).
	Rate float64
	// Latency is added to every packet leaving the host and every packet
	// reaching it; 0 leaves the veth's own (tens of microseconds).
	Latency time.Duration
}

// Host is one process's machine.
type Host struct {
	Name string // unique within the Net; letters, digits and '-' (at most 12)
	Link Link
}

// ErrUnsupported is wrapped by every error that says this machine cannot
// make a Net (not Linux, not root, no ip or tc, no namespaces, no netem).
var ErrUnsupported = errors.New("nsnet: emulated links are not available here")

func checkHosts(hosts []Host) error {
	seen := map[string]bool{}
	for _, h := range hosts {
		if h.Name == "" || len(h.Name) > 12 {
			return fmt.Errorf("nsnet: host name %q: want 1 to 12 characters", h.Name)
		}
		for _, r := range h.Name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("nsnet: host name %q: letters, digits and '-' only", h.Name)
			}
		}
		if seen[h.Name] {
			return fmt.Errorf("nsnet: host name %q given twice", h.Name)
		}
		seen[h.Name] = true
		if h.Link.Rate < 0 || h.Link.Latency < 0 {
			return fmt.Errorf("nsnet: host %s: negative rate or latency", h.Name)
		}
		if h.Link.Rate > 0 && h.Link.Rate < 1e3 {
			return fmt.Errorf("nsnet: host %s: rate %.0f B/s is below 1 kB/s", h.Name, h.Link.Rate)
		}
	}
	if len(hosts) == 0 || len(hosts) > maxHosts {
		return fmt.Errorf("nsnet: %d hosts: want 1 to %d", len(hosts), maxHosts)
	}
	return nil
}

// maxHosts fits the addresses of one /16.
const maxHosts = 60000

// addrOf is host i's address on the bridge's 10.77.0.0/16.
func addrOf(i int) string { return fmt.Sprintf("10.77.%d.%d", (i+2)/250, (i+2)%250+1) }
