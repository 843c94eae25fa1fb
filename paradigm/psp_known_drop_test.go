package paradigm

import "testing"

// KnownDropped is exactly PSP's drop rule as a worker can know it: a
// gradient tagged below a version the shard has reached is dropped by it
// at that version and every later one, and one tagged at or above it is
// taken. Every other paradigm's blocks are always sent.
func TestPSPKnownDroppedIsTheShardsRule(t *testing.T) {
	sp := Spec{Kind: PSP, C: 2, BFrac: 1}
	for seen := uint64(0); seen < 6; seen++ {
		for tag := uint64(0); tag < 8; tag++ {
			for later := seen; later < seen+3; later++ {
				a := newPSPAgg(3, 2, 0)
				a.Reset(later, nil)
				ok, _, _ := a.Push(0, Grad{ID: 1, Worker: 0, Read: later, Clock: tag})
				if known := sp.KnownDropped(tag, seen); known && ok {
					t.Fatalf("tag %d, seen %d: known dropped, but the shard at version %d took it", tag, seen, later)
				}
				if later == seen && ok == sp.KnownDropped(tag, seen) {
					t.Fatalf("tag %d at version %d: taken %v, known dropped %v", tag, seen, ok, sp.KnownDropped(tag, seen))
				}
			}
		}
	}
	for _, k := range []Kind{BSP, ASP, SSP, DSSP, Elastic, Backup, Softsync, Delay} {
		if (Spec{Kind: k}).KnownDropped(0, 5) {
			t.Errorf("%s withholds a block", k)
		}
	}
}
