package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/wire"
	"github.com/spf13/pflag"
)

// tlsFlags turn on TLS for a live process's connections (DESIGN.md: "TLS
// is an option"). The token still authenticates every peer; TLS adds
// privacy and lets workers verify the servers they talk to.
type tlsFlags struct {
	on             bool
	cert, key, ca  string
	serverNameOver string
}

func (t *tlsFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&t.on, "tls", false, "use TLS on every connection (implied by the other --tls-* flags; default $PACER_TLS=1)")
	fs.StringVar(&t.cert, "tls-cert", "", "PEM certificate this process presents (servers: required with TLS; default $PACER_TLS_CERT)")
	fs.StringVar(&t.key, "tls-key", "", "PEM private key of --tls-cert (default $PACER_TLS_KEY)")
	fs.StringVar(&t.ca, "tls-ca", "", "PEM CA bundle that verifies the servers dialled (default $PACER_TLS_CA; none: the system's roots)")
	fs.StringVar(&t.serverNameOver, "tls-server-name", "", "name to verify in the servers' certificates instead of the dialled host (default $PACER_TLS_SERVER_NAME)")
}

// maxCABytes bounds --tls-ca: a whole system's roots (Debian's bundle,
// 140-odd certificates) are 220 KB; 4 MiB holds a bundle many times that
// and refuses unread a file that cannot be one.
const maxCABytes = 4 << 20

// transport builds the process's transport; server reports whether the
// process accepts connections (and so needs a certificate).
func (t *tlsFlags) transport(env roles.Env, server bool) (wire.TCP, error) {
	for _, v := range []struct {
		dst *string
		key string
	}{{&t.cert, "PACER_TLS_CERT"}, {&t.key, "PACER_TLS_KEY"}, {&t.ca, "PACER_TLS_CA"}, {&t.serverNameOver, "PACER_TLS_SERVER_NAME"}} {
		if *v.dst == "" {
			*v.dst = env.Get(v.key)
		}
	}
	on := t.on || env.Get("PACER_TLS") == "1" || t.cert != "" || t.key != "" || t.ca != "" || t.serverNameOver != ""
	if !on {
		return wire.TCP{}, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.serverNameOver}
	switch {
	case (t.cert == "") != (t.key == ""):
		return wire.TCP{}, errors.New("--tls-cert and --tls-key go together: give both or neither")
	case t.cert != "":
		c, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return wire.TCP{}, fmt.Errorf("--tls-cert=%s --tls-key=%s: %w", t.cert, t.key, err)
		}
		cfg.Certificates = []tls.Certificate{c}
	case server:
		return wire.TCP{}, errors.New("TLS is on but a server needs its certificate: give --tls-cert and --tls-key (or $PACER_TLS_CERT and $PACER_TLS_KEY)")
	}
	if t.ca != "" {
		pem, err := filecap.Read(t.ca, "CA bundle", maxCABytes)
		if err != nil {
			return wire.TCP{}, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return wire.TCP{}, fmt.Errorf("--tls-ca=%s: no PEM certificate in it", t.ca)
		}
		cfg.RootCAs = pool
	}
	return wire.TCP{TLS: cfg}, nil
}
