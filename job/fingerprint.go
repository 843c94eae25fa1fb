package job

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// This file: the job's fingerprint. Every process of a live job must run
// the same job; shards started by hand each build theirs from their own
// flags, so a shard is checked against the coordinator's description (the
// one every worker received) before it serves a worker or takes the
// coordinator's membership view.

// shaping is one field of a description that shapes training, named as
// its flag is.
type shaping struct {
	name string
	show string // what an error prints
	key  []byte // what is compared: the value's JSON
	// unhashed leaves the field out of Fingerprint (Diff still compares it).
	unhashed bool
}

// fields lists the fields that shape training: what a shard computes
// (paradigm, model, data, optimizer, seed, the job's length) and what the
// membership does (workers, shards, heartbeat timeout). Per-process fields
// (the data directory, listen addresses) and the coordinator's own
// reporting (eval-every, test-limit, target) are left out: two shards may
// differ in them and still train the same model.
func (d *Description) fields() []shaping {
	j := &d.Job
	f := func(name string, show string, v any) shaping {
		b, err := json.Marshal(v)
		if err != nil { // plain values: cannot happen
			b = []byte(fmt.Sprintf("%#v", v))
		}
		return shaping{name: name, show: show, key: b}
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fs := []shaping{
		f("version", strconv.Itoa(d.Version), d.Version),
		f("paradigm", j.Spec.String(), j.Spec),
		f("workers", strconv.Itoa(j.Workers), j.Workers),
		f("shards", strconv.Itoa(j.Shards), j.Shards),
		f("model", j.Model, j.Model),
		f("init", shortDigest(j.InitSHA256), j.InitSHA256),
		f("dataset", j.Dataset, j.Dataset),
		f("train-limit", strconv.Itoa(j.TrainLimit), j.TrainLimit),
		f("train-n", strconv.Itoa(d.TrainN), d.TrainN),
		f("epochs", num(j.Epochs), j.Epochs),
		f("batch", strconv.Itoa(j.Batch), j.Batch),
		f("lr", num(j.LR), j.LR),
		f("momentum", num(j.Momentum), j.Momentum),
		f("weight-decay", num(j.WeightDecay), j.WeightDecay),
		f("optimizer", j.Optimizer.String(), j.Optimizer),
		f("lr-schedule", fmt.Sprintf("%+v", j.Schedule), j.Schedule),
		f("seed", strconv.FormatUint(j.Seed, 10), j.Seed),
		f("full-async-lr", strconv.FormatBool(j.FullAsyncLR), j.FullAsyncLR),
		f("sampling", cmp.Or(j.Sampling, SamplingShard), j.Sampling),
		f("normalize", cmp.Or(j.Normalize, NormalizeNone), j.Normalize),
		f("clip-norm", num(j.ClipNorm), j.ClipNorm),
		f("ema", num(j.EMA), j.EMA),
		f("heartbeat-timeout", j.HeartbeatTimeout.String(), j.HeartbeatTimeout),
	}
	emaTime := f("ema-time", j.EMATime.String(), j.EMATime)
	// Hashed only when set: a job without it keeps the fingerprint it had
	// before the field existed, so its checkpoints still resume.
	emaTime.unhashed = j.EMATime == 0
	return append(fs, emaTime)
}

// Fingerprint is a short digest of the fields that shape training (see
// fields): two descriptions with the same fingerprint train the same job.
func (d *Description) Fingerprint() string {
	h := sha256.New()
	for _, f := range d.fields() {
		if f.unhashed {
			continue
		}
		fmt.Fprintf(h, "%s=%s\n", f.name, f.key)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Diff names the first field that shapes training in which d differs from
// other, with both values (d's first), or returns ok = false when they
// train the same job.
func (d *Description) Diff(other *Description) (field, mine, theirs string, ok bool) {
	a, b := d.fields(), other.fields()
	for i := range a {
		if string(a[i].key) != string(b[i].key) {
			mine, theirs = a[i].show, b[i].show
			if mine == theirs { // a difference the short form hides
				mine, theirs = string(a[i].key), string(b[i].key)
			}
			return a[i].name, mine, theirs, true
		}
	}
	return "", "", "", false
}

// Mismatch returns nil when d and other train the same job, or an error
// that names both sides and the first differing field, e.g.
// "shard 1's job differs from shard 0's: paradigm ssp:s=3 ≠ bsp".
func (d *Description) Mismatch(dName string, other *Description, otherName string) error {
	field, mine, theirs, ok := d.Diff(other)
	if !ok {
		return nil
	}
	return fmt.Errorf("%s's job differs from %s's: %s %s ≠ %s (start every process of a job with the same job flags, or the same --job)",
		dName, otherName, field, mine, theirs)
}

// shortDigest is the first 12 hex digits of an initial weights' digest, as
// an error shows it ("none" for pacer's own models).
func shortDigest(h string) string {
	if h == "" {
		return "none"
	}
	return "sha256:" + h[:min(len(h), 12)]
}
