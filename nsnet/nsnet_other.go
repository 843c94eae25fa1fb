//go:build !linux

package nsnet

import (
	"context"
	"fmt"
	"net"
	"os/exec"
)

// Net is a set of hosts on one bridge; it needs Linux.
type Net struct{}

// Check says whether this machine can make a Net: it cannot, off Linux.
func Check() error { return fmt.Errorf("%w: network namespaces need Linux", ErrUnsupported) }

// Netem says a link latency cannot be emulated: network namespaces need Linux.
func Netem() error { return Check() }

// New refuses: network namespaces need Linux.
func New(hosts []Host) (*Net, error) {
	if err := checkHosts(hosts); err != nil {
		return nil, err
	}
	return nil, Check()
}

func (n *Net) Addr(name string) string      { return "" }
func (n *Net) Namespace(name string) string { return "" }
func (n *Net) Command(name string, argv ...string) *exec.Cmd {
	return exec.Command(argv[0], argv[1:]...)
}
func (n *Net) Listen(name string, port int) (*net.TCPListener, error) {
	return nil, Check()
}
func (n *Net) Dial(ctx context.Context, name, addr string) (net.Conn, error) { return nil, Check() }
func (n *Net) Close() error                                                  { return nil }
