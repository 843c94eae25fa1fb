package worker

import "testing"

func TestShardList(t *testing.T) {
	if got := shardList(4, func(i int) bool { return i%2 == 1 }); got != "1, 3" {
		t.Errorf("shardList: %q", got)
	}
}
