package wire

import (
	"encoding/json"
	"fmt"
	"math"
)

// Hello is the payload of the first frame on every connection (JSON in
// Frame.Bytes). Control payloads are small and rare, so JSON's cost is
// irrelevant and its readability helps debugging; floats never use it.
type Hello struct {
	Token  string          `json:"token"`
	Role   string          `json:"role"`           // "worker", "shard", "coordinator", ...
	Worker int32           `json:"worker"`         // requested id; -1 lets the server assign one
	Meta   json.RawMessage `json:"meta,omitempty"` // application data (job name, capabilities)
}

// SetJSON makes f a byte-payload frame of type t carrying v as JSON.
func (f *Frame) SetJSON(t MsgType, v any) error {
	if t.CarriesFloats() || t == MsgPull {
		return fmt.Errorf("%w: %s cannot carry JSON", ErrPayload, t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("wire: encoding %s payload: %w", t, err)
	}
	f.Type = t
	f.Floats = f.Floats[:0]
	f.Bytes = append(f.Bytes[:0], b...)
	return nil
}

// JSON decodes f's byte payload into v.
func (f *Frame) JSON(v any) error {
	if err := json.Unmarshal(f.Bytes, v); err != nil {
		return fmt.Errorf("wire: decoding %s payload: %w", f.Type, err)
	}
	return nil
}

// SetError makes f an Error frame with the given code and message, keeping
// ReqID so it answers the same request.
func (f *Frame) SetError(code ErrorCode, msg string) {
	id := f.ReqID
	f.Reset()
	f.Type, f.ReqID, f.Worker, f.Extra = MsgError, id, -1, uint64(code)
	f.Bytes = append(f.Bytes, msg...)
}

// Err returns f as a *RemoteError if it is an Error frame, else nil.
func (f *Frame) Err() error {
	if f.Type != MsgError {
		return nil
	}
	return &RemoteError{Code: ErrorCode(f.Extra), Message: string(f.Bytes)}
}

// wireSize is the number of bytes f occupies on the wire.
func wireSize(f *Frame) int {
	if f.Type.CarriesFloats() {
		return HeaderSize + 4*len(f.Floats)
	}
	return HeaderSize + len(f.Bytes)
}

// CheckFinite returns an error wrapping ErrNonFinite that names the first
// NaN or ±Inf in v, or nil. Shard servers call it on every pushed block
// before touching their weights, so one bad gradient cannot poison a model.
func CheckFinite(v []float32) error {
	// Fast pass: an exponent field of all ones marks NaN and Inf alike, so
	// one mask-and-compare per value, OR-folded without branches, screens
	// the whole block; the slow pass only runs to name the culprit.
	var bad uint32
	for _, x := range v {
		e := math.Float32bits(x) & 0x7f800000
		bad |= (e + 0x00800000) & 0x80000000 // carries into bit 31 only when e == 0x7f800000
	}
	if bad == 0 {
		return nil
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %v at index %d", ErrNonFinite, x, i)
		}
	}
	return nil
}
