package main

import (
	"fmt"
	"net"
	"strings"
)

// minTokenLen is the shortest token taken without a warning: 16 random
// characters are beyond guessing over the network at any rate a server
// answers Hellos; a word or a 3-character token is not.
const minTokenLen = 16

// exposureWarnings says what in a server's setting leaves a job open to
// others on the network: a plaintext listener on an address other hosts
// reach (the token then crosses the network in the clear), and a token short
// enough to guess. Both are legal (a private network, a test), so they are
// warnings, not refusals.
func exposureWarnings(listen string, tlsOn bool, token string) []string {
	var out []string
	if !tlsOn && !loopbackOnly(listen) {
		out = append(out, fmt.Sprintf("--listen %s without TLS: other hosts can connect, and the token and the weights cross the network in the clear (give --tls-cert and --tls-key, docs/security.md)", listen))
	}
	if n := len(token); n < minTokenLen {
		out = append(out, fmt.Sprintf("the token is %d characters long: use at least %d random ones (e.g. openssl rand -hex 16)", n, minTokenLen))
	}
	return out
}

// loopbackOnly reports whether addr (host:port) is reached only from this
// machine: a loopback IP or localhost. An empty host, 0.0.0.0 and :: listen
// on every interface.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
