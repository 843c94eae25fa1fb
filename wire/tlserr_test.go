package wire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTLSSetupErrorsNamed (issue 20, finding 10): a plaintext client
// against a TLS server failed with "connection closed: read: EOF" and no
// hint of TLS. Each mismatch is named (ErrTLSMismatch, saying which side
// has TLS), a certificate the client does not trust is a certificate
// error, and a refusal by a plaintext server stays what it is.
func TestTLSSetupErrorsNamed(t *testing.T) {
	srvTLS, cliTLS := testTLS(t)
	_, otherCA := testTLS(t) // trusts another self-signed certificate only
	cfg := Config{Token: testToken, CallTimeout: 10 * time.Second}
	tlsSrv := start(t, TCP{TLS: srvTLS}, cfg, cfg)
	plainSrv := start(t, TCP{}, cfg, cfg)
	dial := func(tr TCP, addr, token string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cc := ClientConfig{Config: cfg, Hello: Hello{Role: "worker", Worker: -1}}
		cc.Token = token
		c, err := Dial(ctx, tr, addr, cc)
		if err == nil {
			c.Close()
		}
		return err
	}
	err := dial(TCP{}, tlsSrv.addr, testToken)
	if !errors.Is(err, ErrTLSMismatch) || !strings.Contains(err.Error(), "serves TLS") {
		t.Errorf("plaintext client, TLS server: %v; want ErrTLSMismatch saying the server serves TLS", err)
	}
	err = dial(TCP{TLS: cliTLS}, plainSrv.addr, testToken)
	if !errors.Is(err, ErrTLSMismatch) || !strings.Contains(err.Error(), "without TLS") {
		t.Errorf("TLS client, plaintext server: %v; want ErrTLSMismatch saying the server has no TLS", err)
	}
	err = dial(TCP{TLS: otherCA}, tlsSrv.addr, testToken)
	if !IsCertificateError(err) || errors.Is(err, ErrTLSMismatch) {
		t.Errorf("untrusted certificate: %v; want a certificate error", err)
	}
	err = dial(TCP{}, plainSrv.addr, "wrong")
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeUnauthenticated || errors.Is(err, ErrTLSMismatch) || IsCertificateError(err) {
		t.Errorf("wrong token: %v; want the server's refusal only", err)
	}
	if err := dial(TCP{TLS: cliTLS}, tlsSrv.addr, testToken); err != nil {
		t.Errorf("matching TLS: %v", err)
	}
}
