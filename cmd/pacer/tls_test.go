package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/roles"
)

// selfSigned writes a certificate for 127.0.0.1 that is its own CA, and
// its key, as PEM files in dir.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pacer test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key
}

func TestTLSFlagErrors(t *testing.T) {
	clearRoleEnv(t)
	t.Setenv("PACER_TOKEN", "x")
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	base := []string{"server", "--index", "0", "--peers", "127.0.0.1:1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(base, "--tls"), "needs its certificate"},
		{append(base, "--tls-cert", cert), "go together"},
		{append(base, "--tls-cert", cert, "--tls-key", filepath.Join(dir, "none.pem")), "none.pem"},
		{append(base, "--tls-cert", key, "--tls-key", key), "--tls-cert"},
		{append(base, "--tls-cert", cert, "--tls-key", key, "--tls-ca", key), "no PEM certificate"},
		{[]string{"worker", "--coordinator", "127.0.0.1:1", "--tls-ca", filepath.Join(dir, "none.pem")}, "--tls-ca"},
	} {
		_, errs, code := pacer(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer %v: exit %d, stderr %q; want an error naming %q", c.args, code, errs, c.want)
		}
	}
}

// TestWorkerOverTLS: a shard serving TLS with the server flags' transport;
// `pacer worker --tls-ca` verifies it and trains the job to its end, while
// a worker that does not trust the certificate is refused.
func TestWorkerOverTLS(t *testing.T) {
	clearRoleEnv(t)
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	srvFlags := tlsFlags{cert: cert, key: key, ca: cert}
	tr, err := srvFlags.transport(roles.Env{}, true)
	if err != nil || tr.TLS == nil || len(tr.TLS.Certificates) != 1 {
		t.Fatalf("server transport %+v, %v", tr, err)
	}
	sv, addr := serveOneShard(t, "bsp", 1, tr)

	t.Setenv("PACER_TOKEN", "tok")
	// Not trusted (the system's roots do not know a self-signed
	// certificate): refused, and the error says why.
	_, errs, code := pacer(t, "worker", "--coordinator", addr, "--tls", "--connect-timeout", "2s", "--log-level", "error")
	if code == 0 || !strings.Contains(errs, "certificate") {
		t.Fatalf("untrusting worker: exit %d, %q: want a certificate error", code, errs)
	}
	t.Setenv("PACER_TLS_CA", cert) // the variable works as the flag does
	out, errs, code := pacer(t, "worker", "--coordinator", addr, "--log-level", "warn")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("pacer worker over TLS: exit %d: %s %s", code, out, errs)
	}
	if st := sv.Coordinator().Stats(); st.Pushes < 10 {
		t.Errorf("coordinator counted %d pushes", st.Pushes)
	}
}
