package timing

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// PSP paper, Section 4.2: 0.16% of pull responses get an extra 4 s.
func TestSpikeFrequencyMatchesPSP(t *testing.T) {
	s, err := NewServers(MustServerDelay("spike"), 4, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 500000
	spikes := 0
	for i := range draws {
		switch d := s.PullDelay(i % 4); d {
		case 0:
		case 4 * time.Second:
			spikes++
		default:
			t.Fatalf("pull delay %v, want 0 or 4s", d)
		}
	}
	// Binomial sd at p = 0.0016 over 500k draws is about 28 spikes (0.0056%).
	if f := float64(spikes) / draws; math.Abs(f-0.0016) > 0.0002 {
		t.Errorf("spike frequency %.5f, want 0.0016", f)
	}
}

func TestConstPlusSpikeAdds(t *testing.T) {
	s, err := NewServers(MustServerDelay("const:delay=10ms+const:delay=5ms+spike:p=0.5,delay=1s"), 1, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]int{}
	for range 1000 {
		seen[s.PullDelay(0)]++
	}
	if len(seen) != 2 || seen[15*time.Millisecond] < 400 || seen[1015*time.Millisecond] < 400 {
		t.Errorf("delays %v, want about half 15ms and half 1.015s", seen)
	}
	none, err := NewServers(MustServerDelay(""), 3, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if d := none.PullDelay(i % 3); d != 0 {
			t.Fatalf("no model: delay %v", d)
		}
	}
	if none.Shards() != 3 {
		t.Errorf("Shards() = %d", none.Shards())
	}
}

// Shard s's i-th delay depends only on (seed, s, i), not on other shards' pulls.
func TestShardStreamsIndependent(t *testing.T) {
	const shards, k = 3, 3000
	spec := "spike:p=0.05,delay=1s"
	seq, _ := NewServers(MustServerDelay(spec), shards, 1, 8)
	ref := make([][]time.Duration, shards)
	for sh := range shards {
		for range k {
			ref[sh] = append(ref[sh], seq.PullDelay(sh))
		}
	}
	mixed, _ := NewServers(MustServerDelay(spec), shards, 1, 8)
	got := make([][]time.Duration, shards)
	rng := rand.New(rand.NewPCG(3, 4))
	for left := shards * k; left > 0; {
		sh := rng.IntN(shards)
		if len(got[sh]) == k {
			continue
		}
		got[sh] = append(got[sh], mixed.PullDelay(sh))
		left--
	}
	differ := false
	for sh := range ref {
		for i := range ref[sh] {
			if ref[sh][i] != got[sh][i] {
				t.Fatalf("shard %d pull %d: %v in order, %v interleaved", sh, i, ref[sh][i], got[sh][i])
			}
			if ref[sh][i] != ref[0][i] {
				differ = true
			}
		}
	}
	if !differ {
		t.Error("all shards drew identical sequences")
	}
}

// A term with shard=N delays that shard's streams only, and the streams of
// the other shards draw as they would without the term's shard (a spike
// draws on every stream whichever shard it names).
func TestShardTerms(t *testing.T) {
	const shards, perShard = 3, 4
	s, err := NewServers(MustServerDelay("const:delay=5ms,shard=1+const:delay=1ms+spike:p=1,delay=2s,shard=2"), shards, perShard, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Shards() != shards {
		t.Errorf("Shards() = %d, want %d", s.Shards(), shards)
	}
	want := []time.Duration{time.Millisecond, 6 * time.Millisecond, 2*time.Second + time.Millisecond}
	for stream := range shards * perShard {
		if got := s.PullDelay(stream); got != want[stream/perShard] {
			t.Errorf("stream %d (shard %d): delay %v, want %v", stream, stream/perShard, got, want[stream/perShard])
		}
	}
	// The same spike on shard 0 only or on every shard: shard 0's delays
	// are the same draws.
	only, _ := NewServers(MustServerDelay("spike:p=0.3,delay=1s,shard=0"), 2, 1, 5)
	all, _ := NewServers(MustServerDelay("spike:p=0.3,delay=1s"), 2, 1, 5)
	var hits int
	for range 200 {
		a, b := only.PullDelay(0), all.PullDelay(0)
		if a != b {
			t.Fatalf("shard 0: %v with shard=0, %v without", a, b)
		}
		if a > 0 {
			hits++
		}
		if d := only.PullDelay(1); d != 0 {
			t.Fatalf("shard 1 delayed %v by a spike of shard 0", d)
		}
		all.PullDelay(1)
	}
	if hits == 0 {
		t.Error("no spike in 200 draws at p=0.3")
	}
}
