package live

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: how a connection proves a control role. The job token (the
// wire layer checks it on every connection) makes a worker; the control
// roles (proto.RoleCoordinator: membership, which removes workers from the
// shards; proto.RoleObserver: stats, weight pulls, stopping the job) must also
// present the control token, which only servers and the launcher hold.

// checkJob refuses a connection whose Hello presents a job other than this
// shard's. The presented job is shard 0's (the coordinator's own, or the
// one it sent the worker), so the error reads "shard 1's job differs from
// shard 0's: paradigm ssp:s=3 ≠ bsp"; on shard 0 it is the job a worker
// joined, refused by a shard 0 restarted with other flags. A Hello without
// a job (tools, tests speaking the protocol by hand) is not checked.
func (sv *Server) checkJob(h wire.Hello) error {
	if len(h.Meta) == 0 {
		return nil
	}
	var m proto.HelloMeta
	if err := json.Unmarshal(h.Meta, &m); err != nil {
		return remoteErr(wire.CodeBadRequest, "role %s: bad hello meta: %v", h.Role, err)
	}
	if m.Job == nil {
		return nil
	}
	presented, err := job.ParseDescription(m.Job)
	if err != nil {
		return remoteErr(wire.CodeBadRequest, "role %s: %v", h.Role, err)
	}
	// The job a worker presents to shard 0 came from an earlier shard 0
	// process (one restarted since, perhaps with other flags): the worker
	// is named as its holder there.
	from := "shard 0"
	if sv.cfg.Index == 0 {
		from = fmt.Sprintf("worker %d", h.Worker)
	}
	if err := sv.cfg.Params.Mismatch(fmt.Sprintf("shard %d", sv.cfg.Index), &presented, from); err != nil {
		return remoteErr(wire.CodeBadRequest, "%v", err)
	}
	return nil
}

// checkControl checks a control role's token in constant time (both sides
// hashed, so not even the length leaks).
func (sv *Server) checkControl(h wire.Hello) error {
	var m proto.HelloMeta
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
