package live

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/live/membership"
)

// The bound on the coordinator's state file holds what the coordinator
// can write: the largest member record (every number at its widest, the
// most displaced processes membership keeps) fits maxMemberBytes, and the
// fixed part at its widest fits maxCoordFixed.
func TestCoordStateBound(t *testing.T) {
	m := memberState{State: removed, Inc: math.MaxUint64, Seq: math.MaxUint64, Clock: math.MinInt64, Pushes: math.MinInt64,
		WaitUS: math.MaxUint64, BusyUS: math.MaxUint64}
	for range maxDisplacedKept(t) {
		m.Displaced = append(m.Displaced, math.MaxUint64)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)+1 > maxMemberBytes { // and its comma
		t.Errorf("the widest member record is %d bytes, above maxMemberBytes %d", len(b)+1, maxMemberBytes)
	}
	st := coordState{Version: math.MinInt, Paradigm: "elastic:r=1000000,apply=local,interval=mean:1000000", Workers: math.MinInt,
		Target: math.MinInt64, Pushes: math.MinInt64, Done: true, Started: math.MinInt64, First: math.MinInt64, Removed: math.MinInt64,
		NeverConnected: math.MinInt64, Joined: math.MinInt64, Refused: math.MinInt64, Releases: math.MinInt64, MaxGap: math.MinInt64,
		ControllerCall: math.MinInt64, ControllerSecs: -math.MaxFloat64, Restarts: math.MinInt64, Barriers: math.MaxUint64,
		BarrierPushes: math.MinInt64, BatchLossSum: -math.MaxFloat64, BatchLosses: math.MinInt64, Incarnation: math.MaxUint64}
	if b, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if len(b) > maxCoordFixed {
		t.Errorf("the widest fixed part is %d bytes, above maxCoordFixed %d", len(b), maxCoordFixed)
	}
}

// maxDisplacedKept is how many displaced processes membership keeps under
// one id: restoring a record that lists one more is refused.
func maxDisplacedKept(t *testing.T) int {
	t.Helper()
	for n := 1; n <= 64; n++ {
		tab := membership.New(membership.Config{Workers: 1, IDCap: 2}, stateT0)
		s := membership.Saved{Members: []membership.Member{{Displaced: make([]uint64, n)}}}
		if tab.Restore(stateT0, s, false) != nil {
			return n - 1
		}
	}
	t.Fatal("membership keeps more than 64 displaced processes per id")
	return 0
}

// Issue 37: the coordinator's state file is checked against its stat
// size before it is read: a sparse one a byte above the bound is refused
// by its size (filecap.TooLarge, not read first), naming it.
func TestCoordStateFileBounded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(coordFile(dir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(coordFile(dir), maxCoordStateSz+1); err != nil {
		t.Fatal(err)
	}
	_, err := readCoordState(dir)
	var tl *filecap.TooLarge
	if !errors.As(err, &tl) || tl.Unsized || tl.Path != coordFile(dir) || tl.Size != maxCoordStateSz+1 {
		t.Fatalf("a sparse state file a byte above the bound: %v; want it refused by its stat size", err)
	}
}
