package train

import (
	"testing"

	"github.com/pacer-ps/pacer/network"
)

// TestNetworkInVirtualTime (issue 16, item 2): with a network, BSP makes
// the same decisions on the same data (a round still waits for every
// worker), so it learns the same weights — the same accuracy at every
// evaluation — in more virtual time: each round now also moves the MLP's
// 0.94 MB out and back in through each shard's link. ASP's gradients
// become staler and its curve changes.
func TestNetworkInVirtualTime(t *testing.T) {
	ds := fashion(t, 3000, 500)
	slow, err := network.ParseLink("rate=100Mbit,latency=1ms", network.DefaultLink)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"bsp", "asp"} {
		none := quick(s, 3)
		with := quick(s, 3)
		with.Network = &network.Spec{Default: slow, ApplyRate: network.DefaultApplyRate}
		a, err := Virtual(none, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Virtual(with, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: none %.1f virtual s, acc %.4f, staleness %.2f max %d; 100 Mbit/s %.1f s, acc %.4f, staleness %.2f max %d (%s)",
			s, a.VirtualSeconds, a.FinalAccuracy, a.StalenessMean, a.StalenessMax, b.VirtualSeconds, b.FinalAccuracy, b.StalenessMean, b.StalenessMax, b.Network)
		if b.Network == "" || a.Network != "" {
			t.Errorf("%s: network %q / %q", s, a.Network, b.Network)
		}
		if !(b.VirtualSeconds > a.VirtualSeconds) {
			t.Errorf("%s: %.2f virtual s with a 100 Mbit/s network, %.2f without", s, b.VirtualSeconds, a.VirtualSeconds)
		}
		if s == "bsp" {
			if len(a.Curve) != len(b.Curve) {
				t.Fatalf("bsp: %d evaluations without a network, %d with", len(a.Curve), len(b.Curve))
			}
			for i := range a.Curve {
				if a.Curve[i][1] != b.Curve[i][1] {
					t.Errorf("bsp: evaluation %d: accuracy %.4f without a network, %.4f with", i, a.Curve[i][1], b.Curve[i][1])
				}
			}
		}
	}
}
