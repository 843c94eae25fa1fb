package live

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
)

// TestRegimeFileOutrunsTheState (issue 36): the coordinator's state file
// lags its switches; a coordinator restored from a state that names
// regime 1 (asp) while auto's regime file names regime 2 (ssp:s=1,
// written before any shard heard of it) carries on under regime 2, whose
// push count runs ahead of the state's until the workers' resync catches
// up. Without the file, the restored coordinator named regime 1, which
// the shards holding 2 ignored, and its next switch reused generation 2
// for another rule: a shard under one rule, the gate under another
// (seen in `pacer chaos` runs of auto with coordinator restarts). A file
// of another job is refused by name, and one written with no state file
// (a blind restore) still names the regime.
func TestRegimeFileOutrunsTheState(t *testing.T) {
	t0 := time.Unix(1000, 0)
	dir := t.TempDir()
	c, _ := autoCoord3(t, t0, new(int))
	st := c.snapshotState()
	st.Regime, st.RegimePushes = &proto.Regime{Gen: 1, Paradigm: "asp", Base: 10}, 9
	second := proto.Regime{Gen: 2, Paradigm: "ssp:s=1", Base: 40}
	if err := c.saveRegime(dir, second, 39); err != nil {
		t.Fatal(err)
	}

	c2, _ := autoCoord3(t, t0, new(int))
	rec, err := c2.readRegime(dir)
	if err != nil || rec == nil {
		t.Fatalf("readRegime: %v, %v", rec, err)
	}
	newerRegime(st, rec)
	if err := c2.restore(t0, st); err != nil {
		t.Fatal(err)
	}
	if r := c2.regime(); r == nil || *r != second || c2.auto.cur.String() != "ssp:s=1" || c2.auto.regPushes != 39 {
		t.Fatalf("restored regime %+v, in force %s, from push %d: want %+v, ssp:s=1, 39", r, c2.auto.cur, c2.auto.regPushes, second)
	}

	// An older file than the state changes nothing.
	st3 := c.snapshotState()
	st3.Regime, st3.RegimePushes = &proto.Regime{Gen: 3, Paradigm: "asp", Base: 50}, 0
	newerRegime(st3, rec)
	if st3.Regime.Gen != 3 {
		t.Fatalf("a regime file of generation 2 replaced the state's generation 3")
	}

	// No state file: the regime file alone.
	c4, _ := autoCoord3(t, t0, new(int))
	if err := c4.restoreBlind(rec); err != nil {
		t.Fatal(err)
	}
	if r := c4.regime(); r == nil || *r != second {
		t.Fatalf("blind restore's regime %+v, want %+v", r, second)
	}

	// Another job's file.
	other := strings.Replace(readFile(t, regimeFile(dir)), `"workers":3`, `"workers":4`, 1)
	if err := os.WriteFile(regimeFile(dir), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.readRegime(dir); err == nil || !strings.Contains(err.Error(), "another job's") {
		t.Fatalf("another job's regime file: err %v, want it refused as another job's", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
