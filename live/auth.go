package live

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"

	"github.com/pacer-ps/pacer/wire"
)

// This file: how a connection proves a control role. The job token (the
// wire layer checks it on every connection) makes a worker; the control
// roles (RoleCoordinator: membership, which removes workers from the
// shards; RoleObserver: stats, weight pulls, stopping the job) must also
// present the control token, which only servers and the launcher hold.

// helloMeta is the Hello's application payload.
type helloMeta struct {
	// Control is the control token (control roles only).
	Control string `json:"control,omitempty"`
}

// controlHello is the Hello of a control-role connection.
func controlHello(role, controlToken string) wire.Hello {
	meta, _ := json.Marshal(helloMeta{Control: controlToken})
	return wire.Hello{Role: role, Worker: -1, Meta: meta}
}

// checkControl checks a control role's token in constant time (both sides
// hashed, so not even the length leaks).
func (sv *Server) checkControl(h wire.Hello) error {
	var m helloMeta
	if len(h.Meta) > 0 {
		if err := json.Unmarshal(h.Meta, &m); err != nil {
			return remoteErr(wire.CodeUnauthenticated, "role %s: bad hello meta: %v", h.Role, err)
		}
	}
	got := sha256.Sum256([]byte(m.Control))
	if m.Control == "" || subtle.ConstantTimeCompare(got[:], sv.controlHash[:]) != 1 {
		return remoteErr(wire.CodeUnauthenticated, "role %s needs the job's control token", h.Role)
	}
	return nil
}
