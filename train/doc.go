// Package train is virtual-time training (DESIGN.md, driver 2): the
// simulator's event loop drives real workers that compute real gradients on
// real data with real weights; only time is virtual, drawn from the speed and
// delay models. The paradigm core makes the same decisions it makes in the
// live server. A run is deterministic for a seed and independent of how
// loaded the machine is, so accuracy-versus-time comparisons of paradigms
// are reproducible on two cores.
//
// Implementation notes. The simulator runs one event at a time, so one model
// instance computes every worker's gradient. Each worker holds its own copy
// of the weights; a pull response is a snapshot taken when the shard serves it
// (Serve) and becomes the worker's copy when it arrives (Deliver), so a PSP
// worker that computes before a delayed response arrives really uses its old
// block. A gradient is computed when its worker starts computing and is
// pushed when the compute time has passed. Gradients are reference counted
// per shard and recycled, so a run allocates nothing per iteration.
package train
