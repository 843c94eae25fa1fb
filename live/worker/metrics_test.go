package worker

import (
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/ops"
	"github.com/pacer-ps/pacer/wire"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReadyzFollowsReadiness: /readyz answers 503 until ready, 200 while.
func TestReadyzFollowsReadiness(t *testing.T) {
	var ready atomic.Bool
	stop, at, err := ops.Serve("127.0.0.1:0", workerCollector{&Worker{wireCfg: wire.Config{Stats: new(wire.Stats)}}}, ready.Load, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if code, _ := httpGet(t, "http://"+at+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before ready: %d, want 503", code)
	}
	ready.Store(true)
	if code, _ := httpGet(t, "http://"+at+"/readyz"); code != 200 {
		t.Errorf("/readyz when ready: %d, want 200", code)
	}
	if code, _ := httpGet(t, "http://"+at+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
}
