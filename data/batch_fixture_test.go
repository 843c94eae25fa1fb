package data

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+orderFixture+" from this package's Batcher")

// orderFixture holds the Go batcher's orders for the Python worker's test (pacer.batches must
// reproduce them bit for bit); TestBatchOrderFixture writes it with -update and otherwise
// checks that it is still what the batcher draws.
var orderFixture = filepath.Join("..", "python", "testdata", "batches.json")

// orderCase is one worker's configuration. Small cases keep every batch's indices (Epochs:
// epoch → batch → sample indices); big ones keep a digest of each epoch (Digests).
type orderCase struct {
	Seed            uint64
	Worker, Workers int
	N, Batch        int
	Global          bool
	Epochs          [][][]int     `json:",omitempty"`
	Digests         []epochDigest `json:",omitempty"`
}

// epochDigest stands for an epoch's batches: how many, the last one's size, the CRC-32 (IEEE)
// of all their indices in order as little-endian uint32s, and the first batch in full.
type epochDigest struct {
	Batches, Last int
	CRC32         uint32
	First         []int
}

// drawCase is a run of Rand.Uint64N(N) from NewPCG(Seed1, Seed2). Bounds near 2^64 make the
// rejection loop run (for N = 2^63+1, about every other draw), which batch sizes never do.
type drawCase struct {
	Seed1, Seed2, N uint64
	Out             []uint64
}

const fixtureEpochs = 3

func (c *orderCase) fill(t *testing.T, digest bool) {
	b, err := NewBatcher(indexedSet(c.N), BatcherConfig{Worker: c.Worker, Workers: c.Workers, Batch: c.Batch, Seed: c.Seed, Global: c.Global})
	if err != nil {
		t.Fatal(err)
	}
	per := b.BatchesPerEpoch()
	for e := range fixtureEpochs {
		var batches [][]int
		for k := range per {
			bt := b.Next()
			if bt.Epoch != e || bt.Index != k {
				t.Fatalf("%+v: batch (%d, %d), want (%d, %d)", *c, bt.Epoch, bt.Index, e, k)
			}
			batches = append(batches, append([]int(nil), bt.Indices...))
		}
		if !digest {
			c.Epochs = append(c.Epochs, batches)
			continue
		}
		h := crc32.NewIEEE()
		for _, bt := range batches {
			for _, i := range bt {
				h.Write(binary.LittleEndian.AppendUint32(nil, uint32(i)))
			}
		}
		c.Digests = append(c.Digests, epochDigest{Batches: len(batches), Last: len(batches[len(batches)-1]), CRC32: h.Sum32(), First: batches[0]})
	}
}

// orderFixtureBytes computes the fixture: one JSON document, a line per case.
func orderFixtureBytes(t *testing.T) []byte {
	small := []orderCase{
		{Seed: 1, Worker: 0, Workers: 2, N: 103, Batch: 32},                   // a short last batch
		{Seed: 1, Worker: 1, Workers: 2, N: 103, Batch: 32, Global: true},     // the whole set
		{Seed: 7, Worker: 2, Workers: 3, N: 1000, Batch: 64, Global: true},    // a bigger set
		{Seed: 1<<64 - 1, Worker: 3, Workers: 4, N: 257, Batch: 16},           // the top seed; a shard of 2^6
		{Seed: 0, Worker: 0, Workers: 1, N: 1, Batch: 1},                      // nothing to shuffle
		{Seed: 42, Worker: 5, Workers: 8, N: 999, Batch: 1000},                // one short batch an epoch
		{Seed: 3, Worker: 0, Workers: 1, N: 130, Batch: 13, Global: true},     // no short batch
		{Seed: 1, Worker: 1, Workers: 3, N: 500, Batch: 7, Global: false},     // uneven shards
		{Seed: 9, Worker: 6, Workers: 7, N: 70, Batch: 3, Global: true},       // last worker
		{Seed: 1 << 63, Worker: 0, Workers: 2, N: 64, Batch: 5, Global: true}, // sizes up to 2^6
	}
	big := []orderCase{
		// RecipeEndToEndTest's two PyTorch workers (--train-limit 6000, --batch 32, global).
		{Seed: 1, Worker: 0, Workers: 2, N: 6000, Batch: 32, Global: true},
		{Seed: 1, Worker: 1, Workers: 2, N: 6000, Batch: 32, Global: true},
		// Fashion-MNIST's whole training set.
		{Seed: 1, Worker: 0, Workers: 4, N: 60000, Batch: 64, Global: true},
		{Seed: 5, Worker: 3, Workers: 4, N: 60000, Batch: 100},
	}
	draws := []drawCase{
		{Seed1: 1, Seed2: 2, N: 1<<63 + 1},
		{Seed1: 1, Seed2: 2, N: 3 << 62},
		{Seed1: 3, Seed2: 4, N: 1<<64 - 1},
		{Seed1: 3, Seed2: 4, N: 1 << 40},
		{Seed1: 5, Seed2: 0, N: 6},
		{Seed1: 5, Seed2: 0, N: 1},
	}
	var buf bytes.Buffer
	buf.WriteString("{\"Note\": \"written by go test ./data -run TestBatchOrderFixture -update: Go's batcher, the truth pacer.batches is checked against\",\n")
	line := func(v any, last bool) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("  ")
		buf.Write(j)
		if !last {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("\"Cases\": [\n")
	cases := append(small, big...)
	for i := range cases {
		cases[i].fill(t, i >= len(small))
		line(cases[i], i == len(cases)-1)
	}
	buf.WriteString("],\n\"Uint64N\": [\n")
	for i := range draws {
		r := rand.New(rand.NewPCG(draws[i].Seed1, draws[i].Seed2))
		for range 20 {
			draws[i].Out = append(draws[i].Out, r.Uint64N(draws[i].N))
		}
		line(draws[i], i == len(draws)-1)
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

func TestBatchOrderFixture(t *testing.T) {
	want := orderFixtureBytes(t)
	if *update {
		if err := os.WriteFile(orderFixture, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(orderFixture)
	if err != nil {
		t.Fatalf("%v (go test ./data -run TestBatchOrderFixture -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the batcher draws now: %s; if the change is meant, rewrite it with -update (the Python worker follows it)",
			orderFixture, firstDiff(got, want))
	}
	var f struct{ Cases []orderCase }
	if err := json.Unmarshal(got, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases")
	}
}

func firstDiff(got, want []byte) string {
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	return fmt.Sprintf("first difference at byte %d of %d (want %d bytes)", n, len(got), len(want))
}
