package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// ErrTLSMismatch: one side of a connection speaks TLS and the other does
// not. Retrying cannot help: the processes were started with different
// settings.
var ErrTLSMismatch = errors.New("wire: TLS on one side only")

// IsCertificateError reports whether err is a failure to verify a peer's
// certificate (unknown authority, wrong name, expired): a setting to fix,
// not a condition to wait out.
func IsCertificateError(err error) bool {
	var (
		cv *tls.CertificateVerificationError
		ua x509.UnknownAuthorityError
		he x509.HostnameError
		ci x509.CertificateInvalidError
	)
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// plaintextReply reports whether a TLS handshake failed because the server
// answered with something that is not TLS (a plaintext pacer server
// replies to a ClientHello with an Error frame).
func plaintextReply(err error) bool {
	var rh tls.RecordHeaderError
	return errors.As(err, &rh)
}

// closedUnanswered reports whether a plaintext Hello failed because the
// server closed the connection without a reply, as a TLS server does on
// bytes that are not a ClientHello (a pacer server always answers a
// Hello, even to refuse it).
func closedUnanswered(err error) bool {
	var re *RemoteError
	return !errors.As(err, &re) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

// speaksTLS reports whether the server at addr completes a TLS handshake.
// The probe skips verification because it sends nothing and only asks
// whether TLS is spoken at all; the caller then stops with
// ErrTLSMismatch rather than talk to the server over this connection.
func (t TCP) speaksTLS(ctx context.Context, addr string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe: nothing is sent
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		// A server that demands a client certificate refuses us with an
		// alert, which is TLS too.
		var oe *net.OpError
		return errors.As(err, &oe) && oe.Op == "remote error"
	}
	c.Close()
	return true
}
