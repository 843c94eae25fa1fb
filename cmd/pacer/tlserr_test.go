package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/wire"
)

// TestWorkerTLSSetupFatal (issue 20, finding 10): a worker without TLS
// against a TLS server retried until --connect-timeout and then said
// "connection closed: read: EOF"; a worker that does not trust the
// server's certificate retried for the whole minute although
// docs/deploy.md says it stops. Each stops at once, saying why, with
// --connect-timeout at its default minute.
func TestWorkerTLSSetupFatal(t *testing.T) {
	clearRoleEnv(t)
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tr, err := (&tlsFlags{cert: cert, key: key, ca: cert}).transport(roles.Env{}, true)
	if err != nil {
		t.Fatal(err)
	}
	_, tlsAddr := serveOneShard(t, "bsp", 1, tr)
	_, plainAddr := serveOneShard(t, "bsp", 1, wire.TCP{})
	t.Setenv("PACER_TOKEN", "tok")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"plaintext worker, TLS server", []string{"--coordinator", tlsAddr}, []string{"serves TLS", "--tls"}},
		{"TLS worker, plaintext server", []string{"--coordinator", plainAddr, "--tls-ca", cert}, []string{"without TLS", "--tls-cert"}},
		{"untrusted certificate", []string{"--coordinator", tlsAddr, "--tls"}, []string{"certificate", "--tls-ca"}},
	} {
		start := time.Now()
		_, errs, code := pacer(t, append([]string{"worker", "--log-level", "error"}, c.args...)...)
		took := time.Since(start)
		t.Logf("%s: %v: %s", c.name, took, errs)
		if code == 0 {
			t.Errorf("%s: exit 0", c.name)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q does not say %q", c.name, errs, w)
			}
		}
		// The default --connect-timeout is a minute: well under it means
		// no retry, however loaded the machine.
		if took > 20*time.Second {
			t.Errorf("%s: exited after %v, want at once (no retries)", c.name, took)
		}
	}
}
