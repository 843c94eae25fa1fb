// Package zipline chooses ElasticBSP's next barrier (PARADIGMS.md §5; Zhao et
// al., "Elastic Bulk Synchronous Parallel Model for Distributed Deep
// Learning"): given each worker's predicted push times, pick one time per
// worker so that the chosen times are as close together as possible
// (max − min, the fastest worker's wait, is smallest). Worker p is then held
// at its idx[p]+1-th push from now.
//
// # Use
//
// At every barrier the gate predicts R pushes per worker and solves:
//
//	var s zipline.Solver            // kept by the gate, reused every barrier
//	times = zipline.Predict(times, tb, intervals, R)  // e_i^p = tb + i·I_p
//	span := s.ZipLine(times, idx)   // idx[p]: chosen index into times[p]
//
// After the first barrier of a given size this allocates nothing. Input from
// elsewhere should go through Validate first: the solvers assume at least one
// worker, non-empty rows, finite times and ascending rows, and on other input
// they return an unspecified (but non-panicking) answer, or span +Inf with
// idx all -1 when no choice exists.
//
// GridScan and FullGridScan are the paper's baselines (its Algorithm 1 and
// the rotation of it), kept as selectable alternatives and as the reference
// the benchmarks time ZipLine against; BruteForce checks everything in tests.
//
// # Semantics (PARADIGMS.md wins over the paper)
//
// All times are merged ascending, ties by worker id and then index. A window
// takes the merged elements one by one, holding at most one element per
// worker: a new element evicts the same worker's older one. Whenever the
// window holds all n workers, its max − min is evaluated and the first
// strictly smaller value is kept. The window that ends at an element is the
// tightest set whose latest member is that element, so the scan is exact;
// the paper's Algorithm 2 (drop min(Z), refill) evaluates a subset of the
// same windows and the skipped ones are never strictly better, so both make
// the same choice, ties included (a test checks this against a literal
// transcription of Algorithm 2).
//
// # Implementation notes
//
// The paper sorts all nR times and searches the window linearly to evict,
// O(Rn²). Here the n rows are already sorted, so a tournament (loser) tree
// over the n row heads merges them in O(nR log n) without materializing the
// merged list (merge.go). A loser tree plays one match per level where a
// binary heap's sift-down needs two comparisons, and each match is made
// branch-free (times mapped to order-preserving uint64 keys, a 128-bit
// borrow-chain compare of (time, worker), a masked swap): with heterogeneous
// workers the merge order is close to random, so a branch per match is
// mispredicted about half the time and dominated the profile of a heap
// version. The window is a doubly linked list indexed by worker id, so
// eviction is O(1); since elements enter in ascending order, the oldest
// element is the minimum and the newest the maximum, and each evaluation is
// one subtraction.
//
// The best window is not copied on every improvement (that would be O(n)
// each time); only its newest element is recorded, and the window is
// rebuilt once at the end by a binary search per row for the last element
// that merges before it.
//
// The scan stops early once the window's oldest element is its worker's last
// time: that element can never be evicted, so the minimum is fixed while the
// maximum only grows, and no later window is strictly better. With Predict's
// rows (R each) this happens just after the fastest worker's R-th time, so
// the slower workers' later predictions are never merged.
//
// GridScan finds each nearest time by scanning the row, exactly as the
// paper's Algorithm 1 does, so its cost matches the paper's O(R²n) and the
// benchmark ratio compares like with like. Neither GridScan nor FullGridScan
// is exact: a candidate set takes each row's time nearest to the designated
// point, which can sit on the wrong side of it (TestFullGridScanIsNotExact).
//
// The package is pure: no goroutines, no I/O, no clock, no randomness.
package zipline
