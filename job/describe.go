package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/internal/filecap"
)

// Version is the version of the job description (Description) this build
// writes and reads. A change of the description's fields or of their
// meaning bumps it, so a process of another build refuses the job instead
// of running a different one.
const Version = 1

// Description is one live job as every process of it receives it: built
// and validated once (from flags by `pacer server`, or by the launcher
// from a Config), then handed whole, as JSON, to each shard (in its argv)
// and from the coordinator to each worker (in its HelloOK). Nothing in it
// is parsed again from strings on the way: the paradigm travels as the
// typed paradigm.Spec.
type Description struct {
	Version int    `json:"version"`
	Job     Config `json:"job"`
	// TrainN is the number of training samples after Job.TrainLimit: the
	// coordinator ends the job after Pushes() pushes, and shards count
	// epochs for epoch-based schedules. 0: not known yet (a server counts
	// them from the data set's files).
	TrainN int `json:"train_n"`
}

// Describe fills and validates c into a Description of the current
// Version.
func Describe(c Config, trainN int) (Description, error) {
	d := Description{Version: Version, Job: c, TrainN: trainN}
	return d, d.Check()
}

// Check validates d: its version first (a description of another version
// is refused as a whole), then the job (Fill, which defaults the zero
// fields: filling an already filled job changes nothing).
func (d *Description) Check() error {
	if d.Version != Version {
		return fmt.Errorf("job description version %d: this pacer reads version %d (are all the job's processes the same build?)", d.Version, Version)
	}
	if d.TrainN < 0 {
		return fmt.Errorf("job description: train_n=%d must not be negative", d.TrainN)
	}
	return d.Job.Fill()
}

// Pushes is the job's total number of pushes, all workers together: what
// Epochs passes over TrainN samples in batches of Batch take.
func (d *Description) Pushes() int64 {
	n := int64(d.Job.Epochs*float64(d.TrainN)/float64(d.Job.Batch) + 0.999999)
	return max(1, n)
}

// ParseDescription reads a description from its JSON and checks it. The
// version is read and checked before anything else, so a description of
// another version gets that error, not one about a field it names; unknown
// fields are refused.
func ParseDescription(b []byte) (Description, error) {
	var v struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Description{}, fmt.Errorf("job description: %v", err)
	}
	if v.Version == nil {
		return Description{}, errors.New("job description: no version field")
	}
	if *v.Version != Version {
		d := Description{Version: *v.Version}
		return Description{}, d.Check()
	}
	type plain Description
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Description{}, fmt.Errorf("job description: %v", err)
	}
	d := Description(p)
	if err := d.Check(); err != nil {
		return Description{}, fmt.Errorf("job description: %w", err)
	}
	return d, nil
}

// MaxDescriptionBytes bounds a description file: one pacer writes is a
// flat object of about 40 fields, under 2 KB (the longest field a list of
// a few target accuracies), and it must fit a shard's argv (which Linux
// caps at 2 MB for all arguments together); 1 MiB leaves room for any
// indentation while a file of another kind is refused unread.
const MaxDescriptionBytes = 1 << 20

// ReadDescription reads a description given as its JSON text (starting
// with "{") or as the name of a file holding it (at most
// MaxDescriptionBytes, checked before it is read).
func ReadDescription(s string) (Description, error) {
	b := []byte(s)
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		var err error
		if b, err = filecap.Read(s, "job description", MaxDescriptionBytes); err != nil {
			return Description{}, fmt.Errorf("job description: %w", err)
		}
	}
	return ParseDescription(b)
}
