package paradigm

import "testing"

// TestResetShard: every paradigm's aggregator continues at the given version
// with an empty buffer, reports what it discarded, and keeps its membership.
func TestResetShard(t *testing.T) {
	for _, s := range []string{"bsp", "asp", "ssp:s=2", "dssp:sl=1,su=4", "elastic:r=4",
		"backup:b=1", "psp:c=2,b=1,t1=1s", "softsync:n=1", "softsync:n=3", "delay:d=1"} {
		sp, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := New(sp, Config{Workers: 3, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		a := pol.Aggs[1]
		a.Push(0, Grad{ID: 7, Worker: 0})
		buffered := a.Version() == 0 // nothing applied yet: the gradient sits in the buffer
		got := a.Reset(10, nil)
		if a.Version() != 10 {
			t.Errorf("%s: version %d after reset to 10", s, a.Version())
		}
		if buffered && (len(got) != 1 || got[0] != 7) {
			t.Errorf("%s: reset discarded %v, want [7]", s, got)
		}
		if !buffered && len(got) != 0 {
			t.Errorf("%s: reset discarded %v after an apply", s, got)
		}
		if _, ok := a.Deadline(); ok {
			t.Errorf("%s: a τ1 deadline survived the reset", s)
		}
		// A full round at the new version applies, from exactly the live workers.
		pol.Leave(0, 2)
		var applied bool
		for p := 0; p < 2; p++ {
			_, ap, _ := a.Push(0, Grad{ID: uint64(p + 1), Worker: p, Read: 10, Clock: 10})
			applied = applied || ap
		}
		if sp.Kind != Softsync && (!applied || a.Version() < 11) {
			t.Errorf("%s: no apply at version 10 from the two live workers (version %d)", s, a.Version())
		}
	}
}
