package live

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"

	"github.com/pacer-ps/pacer/job"
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
	// Job is the job as the dialling side runs it (a worker's data
	// connection: the description the coordinator sent it; the
	// coordinator's membership link: shard 0's own): a shard whose own
	// job differs refuses the connection, naming the field.
	Job *job.Description `json:"job,omitempty"`
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
	// AgeUS is how long the process has run (µs): a coordinator restarted
	// without its state file bounds the seconds workers report by it.
	AgeUS int64 `json:"age_us,omitempty"`
	// Barriers is the latest barrier count a release carried to it
	// (ElasticBSP apply=local): a restarted coordinator counts on from it.
	Barriers uint64 `json:"barriers,omitempty"`
}

// controlHello is the Hello of a control-role connection; j, when set, is
// the job the dialling side runs.
func controlHello(role, controlToken string, j *job.Description) wire.Hello {
	meta, _ := json.Marshal(helloMeta{Control: controlToken, Job: j})
	return wire.Hello{Role: role, Worker: -1, Meta: meta}
}

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
	var m helloMeta
	if err := json.Unmarshal(h.Meta, &m); err != nil {
		return remoteErr(wire.CodeBadRequest, "role %s: bad hello meta: %v", h.Role, err)
	}
	if m.Job == nil {
		return nil
	}
	// The job a worker presents to shard 0 came from an earlier shard 0
	// process (one restarted since, perhaps with other flags): the worker
	// is named as its holder there.
	from := "shard 0"
	if sv.cfg.Index == 0 {
		from = fmt.Sprintf("worker %d", h.Worker)
	}
	if err := sv.cfg.Params.Mismatch(fmt.Sprintf("shard %d", sv.cfg.Index), m.Job, from); err != nil {
		return remoteErr(wire.CodeBadRequest, "%v", err)
	}
	return nil
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
