package paradigm

import "testing"

func TestClocksMinAcrossLeaveAndJoin(t *testing.T) {
	c := newClocks(3)
	for i := 0; i < 5; i++ {
		c.push(0)
	}
	c.push(1)
	if c.min != 0 || c.max != 5 {
		t.Fatalf("min %d max %d", c.min, c.max)
	}
	c.leave(2) // min jumps past the empty clock values
	if c.min != 1 {
		t.Fatalf("after leave min = %d", c.min)
	}
	c.leave(0)
	if c.max != 1 {
		t.Fatalf("after the fastest left max = %d", c.max)
	}
	c.leave(1)
	c.join(2)
	if c.nLive != 1 || c.min != c.t[2] {
		t.Fatalf("rejoin into an empty job: %+v", c)
	}
}
