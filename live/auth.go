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
	// A worker's control connection says which process it is and how far
	// it has got (workerState), so the coordinator tells a returning
	// worker from a reconnecting one.
	workerState
}

// workerState is where a worker process stands, as it tells the
// coordinator on every control Hello.
type workerState struct {
	// Inc names the worker process (random, never 0 from a worker that
	// sends it): a new one under an old id is a returning worker, whose
	// clock reports count from 1 again.
	Inc uint64 `json:"inc,omitempty"`
	// Seq is the pushes this process has completed; Acked the clock
	// reports the coordinator answered (Seq − Acked = 1: a report is
	// outstanding and will be sent again).
	Seq   uint64 `json:"seq,omitempty"`
	Acked uint64 `json:"acked,omitempty"`
	// Clock is the gate clock the coordinator last named to it, and Held
	// says it waits for the release that follows that report (what a
	// restarted coordinator learns again from its workers).
	Clock int64 `json:"clock,omitempty"`
	Held  bool  `json:"held,omitempty"`
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
