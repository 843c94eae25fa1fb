package paradigm

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseValidSpecs(t *testing.T) {
	cases := map[string]Spec{
		"bsp":                              {Kind: BSP},
		"bsp:agg=sum":                      {Kind: BSP, Sum: true},
		"asp":                              {Kind: ASP},
		"ssp:s=3":                          {Kind: SSP, S: 3},
		"SSP:s=0":                          {Kind: SSP},
		"dssp:sl=3,su=15":                  {Kind: DSSP, SL: 3, SU: 15},
		"dssp:sl=3,su=15,mode=bounded":     {Kind: DSSP, SL: 3, SU: 15, Mode: DSSPBounded},
		"dssp:su=9,sl=2,mode=exact-figure": {Kind: DSSP, SL: 2, SU: 9, Mode: DSSPExactFigure},
		"dssp:sl=3,su=15,wait=next,interval=release": {Kind: DSSP, SL: 3, SU: 15},
		"dssp:sl=3,su=15,wait=sl":                    {Kind: DSSP, SL: 3, SU: 15, Wait: DSSPWaitSL},
		"dssp:sl=1,su=4,interval=push,mode=bounded":  {Kind: DSSP, SL: 1, SU: 4, Mode: DSSPBounded, Interval: DSSPIntervalPush},
		"dssp:sl=1,su=4,WAIT=SL,interval=Push":       {Kind: DSSP, SL: 1, SU: 4, Wait: DSSPWaitSL, Interval: DSSPIntervalPush},
		"elastic:r=15":                               {Kind: Elastic, R: 15},
		"elastic:r=4,search=gridscan":                {Kind: Elastic, R: 4, Search: SearchGridScan},
		"elastic:r=6,apply=local":                    {Kind: Elastic, R: 6, LocalOnly: true},
		"elastic:r=6,apply=arrival":                  {Kind: Elastic, R: 6},
		"elastic:r=6,interval=last":                  {Kind: Elastic, R: 6},
		"elastic:r=6,interval=mean:1":                {Kind: Elastic, R: 6},
		"elastic:r=6,interval=Mean:5,apply=local":    {Kind: Elastic, R: 6, MeanOf: 5, LocalOnly: true},
		"backup:b=4":                                 {Kind: Backup, B: 4},
		"backup:b=0,set=shared":                      {Kind: Backup, SharedSet: true},
		"psp:c=28,b=0.9,t1=0,t2=0":                   {Kind: PSP, C: 28, BFrac: 0.9},
		"psp:c=20,b=75%,t1=50ms,t2=1.5":              {Kind: PSP, C: 20, BFrac: 0.75, T1: 50 * time.Millisecond, T2: 1500 * time.Millisecond},
		"psp":                                        {Kind: PSP, BFrac: 1},
		"psp:c=2,t1=24h,t2=86400":                    {Kind: PSP, C: 2, BFrac: 1, T1: 24 * time.Hour, T2: 24 * time.Hour},
		"softsync:n=15":                              {Kind: Softsync, N: 15},
		"softsync:n=1,lr=const":                      {Kind: Softsync, N: 1, ConstLR: true},
		"delay:d=20":                                 {Kind: Delay, D: 20},
		"DELAY:d=0":                                  {Kind: Delay},
	}
	for in, want := range cases {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("Parse(%q) = %+v, want %+v", in, got, want)
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q via %q: %+v, %v", in, got.String(), again, err)
		}
	}
}

func TestParseBadSpecsListValidForms(t *testing.T) {
	bad := map[string]string{
		"":                                  "unknown paradigm",
		"bpp":                               "unknown paradigm",
		"ssp":                               "missing s=",
		"ssp:s=-1":                          "integer ≥ 0",
		"ssp:s=x":                           "integer",
		"ssp:s=3,s=4":                       "given twice",
		"ssp:s=3,q=1":                       `unknown option "q"`,
		"asp:s=1":                           "no options",
		"dssp:sl=5,su=3":                    "at least sl",
		"dssp:sl=3,su=15,mode=x":            "literal|bounded|exact-figure",
		"dssp:sl=3,su=15,wait=s":            "next|sl",
		"dssp:sl=3,su=15,wait=":             "next|sl",
		"dssp:sl=3,su=15,interval=pull":     "release|push",
		"dssp:sl=3,su=15,wait=sl,wait=next": "given twice",
		"ssp:s=3,wait=sl":                   `unknown option "wait"`,
		"elastic:r=0":                       "≥ 1",
		"elastic:r=3,apply=x":               "arrival|local",
		"elastic:r=3,interval=mean":         "last or mean:k",
		"elastic:r=3,interval=mean:0":       "k ≥ 1",
		"elastic:r=3,interval=mean:101":     "≤ 100",
		"elastic:r=3,interval=avg:3":        `interval="avg:3"`,
		"ssp:s=1,interval=last":             `unknown option "interval"`,
		"backup:b=1,set=all":                "shard|shared",
		"psp:c=2,b=1.5":                     "fraction",
		"psp:c=2,t1=-1s":                    "non-negative duration",
		"softsync:n=0":                      "≥ 1",
		"softsync:n=2,lr=fast":              "staleness|const",
		"ssp:s":                             "not key=value",
		"delay":                             "missing d=",
		"delay:d=-1":                        "d=\"-1\" must be an integer ≥ 0",
		"delay:d=1001":                      "≤ 1000",
		"delay:d=2,n=1":                     `unknown option "n" for delay (it takes: d)`,
		// Issue 20: huge options are refused where they are named, not by
		// running out of memory (elastic) or time (dssp's controller).
		"elastic:r=1000000000":          "r=\"1000000000\" must be an integer ≥ 1 and ≤ 10000",
		"ssp:s=10001":                   "≤ 10000",
		"dssp:sl=3,su=2000000000":       "su=\"2000000000\"",
		"backup:b=1000000000000":        "≤ 100000",
		"softsync:n=99999999999999":     "≤ 100000",
		"psp:c=100001":                  "≤ 100000",
		"elastic:r=9223372036854775808": "r=",
		// PSP's grace times: a deadline is now + t, so a t near the int64
		// limit wrapped to the past; NaN, Inf and huge bare numbers were
		// converted however the platform converts them.
		"psp:c=2,t1=2562047h":  "at most 24h0m0s",
		"psp:c=2,t2=24h0m0.1s": "t2=",
		"psp:c=2,t1=9e9":       "t1=\"9e9\"",
		"psp:c=2,t2=1e300":     "t2=",
		"psp:c=2,t1=NaN":       "t1=\"NaN\"",
		"psp:c=2,t2=+Inf":      "t2=",
		"psp:c=2,t1=-0.5":      "non-negative duration",
		"psp:c=2,t1=86400.001": "at most 24h",
	}
	for in, frag := range bad {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), frag) || !strings.Contains(err.Error(), Forms) {
			t.Errorf("Parse(%q) = %v; want ErrSpec naming %q and listing the forms", in, err, frag)
		}
	}
}

func TestValidateAgainstJob(t *testing.T) {
	for _, tc := range []struct {
		spec string
		k    int
		ok   bool
	}{
		{"backup:b=3", 4, true}, {"backup:b=4", 4, false},
		{"psp:c=4", 4, true}, {"psp:c=5", 4, false},
		{"softsync:n=4", 4, true}, {"softsync:n=5", 4, false},
	} {
		sp, err := Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(sp, Config{Workers: tc.k, Shards: 1})
		if (err == nil) != tc.ok {
			t.Errorf("New(%s, K=%d): err=%v, want ok=%v", tc.spec, tc.k, err, tc.ok)
		}
	}
	if _, err := New(Spec{Kind: ASP}, Config{Workers: 0, Shards: 1}); err == nil {
		t.Error("zero workers accepted")
	}
}

func TestParseList(t *testing.T) {
	l, err := ParseList("bsp; asp;ssp:s=3;")
	if err != nil || len(l) != 3 || l[2].S != 3 {
		t.Fatalf("ParseList = %+v, %v", l, err)
	}
	if _, err := ParseList(" ; "); err == nil {
		t.Error("empty list accepted")
	}
	if _, err := ParseList("bsp;nope"); err == nil {
		t.Error("bad element accepted")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"bsp", "ssp:s=3", "dssp:sl=3,su=15,mode=bounded", "psp:c=28,b=0.9,t1=0,t2=0", "softsync:n=15,lr=const", "elastic:r=15", "delay:d=20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(sp.String())
		if err != nil || again != sp {
			t.Fatalf("%q parsed to %+v, whose String %q reparses to %+v, %v", s, sp, sp.String(), again, err)
		}
	})
}

// TestAutoSpec: auto parses with its defaults, prints back as written,
// refuses bad options by name, and has no policy of its own.
func TestAutoSpec(t *testing.T) {
	for in, want := range map[string]string{
		"auto": "auto", "AUTO": "auto", "auto:every=20,threshold=0.15,lambda=2": "auto",
		"auto:every=5,threshold=0.1,lambda=0": "auto:every=5,threshold=0.1,lambda=0",
		"auto:lambda=0.2,every=20":            "auto:lambda=0.2",
	} {
		sp, err := Parse(in)
		if err != nil || sp.Kind != Auto || sp.String() != want {
			t.Errorf("Parse(%q) = %v (%v), want %s", in, sp, err, want)
			continue
		}
		if again, err := Parse(sp.String()); err != nil || again != sp {
			t.Errorf("%q does not round-trip: %+v vs %+v (%v)", in, again, sp, err)
		}
	}
	for in, field := range map[string]string{
		"auto:every=0": "every", "auto:threshold=-1": "threshold", "auto:lambda=x": "lambda",
		"auto:lambda=NaN": "lambda", "auto:among=bsp": "among",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Parse(%q): %v, want an error naming %s", in, err, field)
		}
	}
	sp, _ := Parse("auto")
	if len(sp.Among()) != len(AutoAmong) || sp.Among()[0].Kind != BSP {
		t.Errorf("Among() = %v", sp.Among())
	}
	cfg := Config{Workers: 4, Shards: 1}
	if _, err := New(sp, cfg); err == nil {
		t.Error("New(auto) built a policy")
	}
	if _, err := NewGate(sp, cfg); err == nil {
		t.Error("NewGate(auto) built a gate")
	}
	if err := sp.Validate(Config{Workers: 1, Shards: 1}); err == nil || !strings.Contains(err.Error(), "candidate") {
		t.Errorf("auto with 1 worker (backup:b=1 among its candidates): %v", err)
	}
}

// auto's among= names its candidates, '|' between them, last among the
// options (a candidate carries commas of its own); it writes back
// canonically and refuses what cannot be a candidate, naming it.
func TestAutoAmong(t *testing.T) {
	sp, err := Parse("auto:every=5,among=bsp|dssp:sl=3,su=15|backup:b=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.String(); got != "auto:every=5,among=bsp|dssp:sl=3,su=15|backup:b=1" {
		t.Errorf("String() = %q", got)
	}
	if again, err := Parse(sp.String()); err != nil || again != sp {
		t.Errorf("round trip: %+v, %v", again, err)
	}
	among := sp.Among()
	if len(among) != 3 || among[0].Kind != BSP || among[1].SU != 15 || among[2].B != 1 {
		t.Errorf("Among() = %v", among)
	}
	if err := sp.Validate(Config{Workers: 1, Shards: 1}); err == nil || !strings.Contains(err.Error(), "backup:b=1") {
		t.Errorf("a candidate that does not fit the job: %v", err)
	}
	for in, want := range map[string]string{
		"auto:among=bsp":              "want 2 to",
		"auto:among=bsp|auto":         "its own candidate",
		"auto:among=bsp|ssp:s=3|bsp":  "bsp given twice",
		"auto:among=bsp|ssp:q=3":      "candidate 2",
		"auto:among=bsp|asp,every=3":  "candidate 2",
		"auto:among=bsp|bsp:agg=mean": "given twice",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error saying %q", in, err, want)
		}
	}
}
