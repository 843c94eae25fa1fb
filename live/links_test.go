package live

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestTLSSetupErrorFatal: dialRetry gives up at once on a TLS setting
// that differs between processes, with the flags to check, and keeps
// retrying anything else (a shard away, a connection lost).
func TestTLSSetupErrorFatal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: a serves TLS", wire.ErrTLSMismatch), "--tls-cert"},
		{fmt.Errorf("wire: dial a: %w", x509.UnknownAuthorityError{}), "--tls-ca"},
		{fmt.Errorf("wire: dial a: %w", x509.HostnameError{Host: "a"}), "--tls-server-name"},
	} {
		if got := proto.TLSSetupError(c.err); got == nil || !errors.Is(got, c.err) || !strings.Contains(got.Error(), c.want) {
			t.Errorf("%v: %v, want it wrapped with a hint naming %s", c.err, got, c.want)
		}
	}
	for _, err := range []error{io.EOF, fmt.Errorf("%w: read: %w", wire.ErrClosed, io.EOF), errors.New("connection refused")} {
		if got := proto.TLSSetupError(err); got != nil {
			t.Errorf("%v: %v, want nil (retried)", err, got)
		}
	}
}
