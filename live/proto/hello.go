package proto

import (
	"encoding/json"

	"github.com/pacer-ps/pacer/wire"
)

// HelloMeta is the Hello's application payload.
type HelloMeta struct {
	// Control is the control token (control roles only).
	Control string `json:"control,omitempty"`
	// Job is the job as the dialling side runs it (a worker's data
	// connection: the description the coordinator sent it; the
	// coordinator's membership link: shard 0's own), as job.Description
	// encodes it: a shard whose own job differs refuses the connection,
	// naming the field.
	Job json.RawMessage `json:"job,omitempty"`
	// A worker's control connection says which process it is and how far
	// it has got (WorkerState), so the coordinator tells a returning
	// worker from a reconnecting one.
	WorkerState
}

// WorkerState is where a worker process stands, as it tells the
// coordinator on every control Hello.
type WorkerState struct {
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

// ControlHello is the Hello of a control-role connection; j, when set, is
// the job the dialling side runs (a job.Description's JSON).
func ControlHello(role, controlToken string, j json.RawMessage) wire.Hello {
	meta, _ := json.Marshal(HelloMeta{Control: controlToken, Job: j})
	return wire.Hello{Role: role, Worker: -1, Meta: meta}
}
