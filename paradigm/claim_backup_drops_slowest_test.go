// Claim: sync SGD with backup workers (PARADIGMS.md §6, the backup-workers
// paper): each shard at version v applies the mean of the first N gradients
// read at v and drops the stragglers' later ones; workers wait for a
// version newer than the one they read.

package paradigm

import "testing"

// §6: first N per version, the rest dropped; a dead worker never blocks.
func TestBackupFirstN(t *testing.T) {
	a := newBackupAgg(4, 3, nil)
	for w := 0; w < 2; w++ {
		push(t, a, 0, Grad{ID: uint64(w), Worker: w})
	}
	ok, applied, ap := push(t, a, 0, Grad{ID: 2, Worker: 3})
	if !ok || !applied || len(ap.Grads) != 3 || ap.Grads[2].Worker != 3 || ap.Grads[0].Weight != 1.0/3 {
		t.Fatalf("apply %+v", ap)
	}
	if ok, _, _ := push(t, a, 0, Grad{ID: 9, Worker: 2, Read: 0}); ok {
		t.Fatal("the straggler's gradient for version 0 was accepted after the apply")
	}
	a.Leave(0, 0)
	a.Leave(0, 1)
	push(t, a, 0, Grad{ID: 5, Worker: 2, Read: 1})
	if ok, applied, ap := push(t, a, 0, Grad{ID: 6, Worker: 3, Read: 1}); !ok || !applied || len(ap.Grads) != 2 {
		t.Fatalf("with two live workers N shrinks to 2: %v %v %+v", ok, applied, ap)
	}
}

func TestBackupSharedSet(t *testing.T) {
	set := &sharedSet{n: 2}
	a, b := newBackupAgg(3, 2, set), newBackupAgg(3, 2, set)
	push(t, a, 0, Grad{ID: 1, Worker: 0})
	push(t, b, 0, Grad{ID: 2, Worker: 1}) // shard b hears worker 1 first
	if ok, _, _ := push(t, a, 0, Grad{ID: 3, Worker: 2}); ok {
		t.Fatal("shard a took worker 2, outside the shared set {0,1}")
	}
	if _, applied, ap := push(t, a, 0, Grad{ID: 4, Worker: 1}); !applied || ap.Grads[1].Worker != 1 {
		t.Fatalf("shard a should apply {0,1}: %+v", ap)
	}
}

func TestPullerBackupWantsNewerVersion(t *testing.T) {
	pol, _ := New(Spec{Kind: Backup, B: 1}, Config{Workers: 3, Shards: 2})
	pl := pol.Pullers[1]
	pl.Start(0, 4, []uint64{7, 6}, false)
	if pl.MinVersion(0) != 8 || pl.MinVersion(1) != 7 {
		t.Fatalf("min versions %d %d", pl.MinVersion(0), pl.MinVersion(1))
	}
}
