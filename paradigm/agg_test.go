package paradigm

import (
	"testing"
	"time"
)

func push(t *testing.T, a Aggregator, now time.Duration, g Grad) (bool, bool, Apply) {
	t.Helper()
	ok, applied, ap := a.Push(now, g)
	if applied {
		ap.Grads = append([]Contribution(nil), ap.Grads...)
	}
	return ok, applied, ap
}
