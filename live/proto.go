package live

import (
	"encoding/json"
	"fmt"

	"github.com/pacer-ps/pacer/wire"
)

// maxWorkers bounds worker ids so a bad frame cannot make a shard or the
// coordinator grow its per-worker tables without limit.
const maxWorkers = 1 << 16

func remoteErr(code wire.ErrorCode, format string, a ...any) error {
	return &wire.RemoteError{Code: code, Message: fmt.Sprintf(format, a...)}
}

func setJSON(f *wire.Frame, t wire.MsgType, v any) error { return f.SetJSON(t, v) }

func decodeJSON(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return remoteErr(wire.CodeBadRequest, "bad JSON payload: %v", err)
	}
	return nil
}
