package live

import "github.com/pacer-ps/pacer/paradigm"

// This file: ElasticBSP apply=local's barriers as the coordinator counts
// them and tells the shards.

// noteBarriers takes the barriers the gate has passed since the last call
// (lock held): ElasticBSP apply=local's shards apply each one, so every new
// count goes to the shard links.
func (c *Coordinator) noteBarriers() {
	if !c.job.Job.Spec.LocalSteps() {
		return // apply=arrival's shards have no barrier to apply
	}
	b := c.barBase + paradigm.Barriers(c.gate)
	if b <= c.bar {
		return
	}
	c.bar, c.barPushes = b, c.ms.Pushes()
	if c.onBarrier != nil {
		c.onBarrier(b)
	}
}

// tellBarriers hands the barrier count so far to the shard links (lock
// held). A restarted coordinator's count comes from its state file and no
// barrier has passed since to send it: a shard 0 restored from a
// checkpoint written before the last barrier's apply would wait for the
// next barrier, and the workers released at this one wait for its
// version, so there would be no next one.
func (c *Coordinator) tellBarriers() {
	if c.bar > 0 && c.onBarrier != nil {
		c.onBarrier(c.bar)
	}
}

// endSuperstep ends the job's last superstep (lock held): under ElasticBSP
// apply=local its gradients, which the workers have stepped their copies
// with, are applied by one more barrier rather than left in the shards'
// buffers (virtual time's Policy.Finish). Pushes that race the end land
// after it and stay buffered.
func (c *Coordinator) endSuperstep() {
	if !c.job.Job.Spec.LocalSteps() {
		return
	}
	c.barBase++
	c.noteBarriers()
}

// adoptBarriers takes a worker's word for the barriers it has been released
// at (lock held): a coordinator restarted from an older state file lost the
// ones since, and the shards' versions and the workers' copies count them.
// A count no job of this length reaches is ignored.
func (c *Coordinator) adoptBarriers(b uint64) {
	if !c.job.Job.Spec.LocalSteps() || b <= c.bar || b > inFlight(c.job) {
		return
	}
	c.barBase += b - c.bar
	c.bar = b
	if c.onBarrier != nil {
		c.onBarrier(b)
	}
}
