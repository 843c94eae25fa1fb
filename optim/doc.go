// Package optim is the update rule a parameter-server shard applies to its contiguous range of
// the flat float32 parameter vector: SGD with optional momentum (heavy-ball or Nesterov),
// PyTorch's RMSprop (centered or not), Adam and AdamW (Config.Rule; adaptive.go follows PyTorch's
// order of operations and TestTorchReference holds them to PyTorch's output), L2 weight decay
// (AdamW's decoupled) and learning-rate schedules. The paradigms' own rates are the weights and
// scale the policy core gives each apply (paradigm.Apply): n-softsync's α₀/τ
// (paradigm.StalenessWeight), PSP's linear scaling d/K.
//
// # Use
//
//	cfg := optim.Config{LR: 0.05, Momentum: 0.9, Schedule: optim.Schedule{Warmup: 500, WarmupDiv: 8}}
//	opt, err := optim.New(cfg, hi-lo) // one per shard range; errors name the bad field
//	...
//	lr := float32(cfg.Rate(step, epoch))
//	opt.ApplyWeighted(w[lo:hi], grads, weights, lr) // weights[k] = 1/K for the mean
//
// For n-softsync the weights carry the staleness: weights[l] = paradigm.StalenessWeight(τ_l)/c,
// so the scaled sum feeds the velocity as PARADIGMS.md §8 prescribes. State and SetState serve checkpoints.
// Sub cuts a range into sub-ranges sharing the state, one per goroutine, for applying in
// parallel across cores; with Adam and AdamW the owner calls Tick once before the sub-ranges'
// applies, so the step count advances once per apply of the whole range.
//
// # Implementation notes
//
// The apply is memory-bound: for K gradients it must read K+1 vectors and write one, and the
// arithmetic per element is a few multiply-adds. So the kernels aim at touching main memory
// exactly that often:
//
//   - Plain SGD needs no aggregated vector at all. The step is folded into w directly,
//     w ← (1 − lr·wd)·w − Σ (lr·a_k)·g_k, four gradients per pass; with K ≤ 4 that is one
//     pass over memory, with more the range is cut into 8 KB chunks so w's chunk stays in L1
//     between the groups.
//   - With momentum, each 8 KB chunk of u = Σ a_k·g_k is built in a stack buffer (four
//     gradients per pass), then consumed by the velocity step while still in L1.
//
// The SGD, heavy-ball and gradient-summing loops are internal/kernel's, in AVX2 where the CPU has
// it (a scalar loop was bound by its arithmetic, not by memory) and without FMA, so every path
// gives the same bits; the other loops are Go, unrolled by four, with operands re-sliced to a
// common length so the compiler drops most bounds checks. The summation order is fixed per
// build, so runs are deterministic, but it differs from a naive mean-then-step: tests compare
// with a float64 reference under a tolerance (and exactly on hand-computed cases that are
// exact in float32). Mismatched slice lengths are programming errors and panic; configuration
// errors are returned.
//
// BenchmarkApplyMean compares the apply of K=4 gradients over 10M floats with an axpy over the
// same size in the same run; docs/benchmarks.md ("Shard apply (optim)") has the figures.
package optim
