package paradigm

import (
	"strings"
	"testing"
)

// A range stands for every threshold in it, in order, and the name keeps
// the range as written.
func TestParseGroupRange(t *testing.T) {
	g, err := ParseGroup(" avg(ssp:s=3..6 | bsp) ")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range g.Members {
		got = append(got, m.String())
	}
	if want := "ssp:s=3 ssp:s=4 ssp:s=5 ssp:s=6 bsp"; strings.Join(got, " ") != want {
		t.Errorf("members %v, want %s", got, want)
	}
	if g.String() != "avg(ssp:s=3..6|bsp)" {
		t.Errorf("name %q", g.String())
	}
	// A range in an option that is not the last keeps the options after it.
	g, err = ParseGroup("avg(dssp:sl=3,su=14..15)")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Members) != 2 || g.Members[1].String() != "dssp:sl=3,su=15" {
		t.Errorf("members %v", g.Members)
	}
	g, err = ParseGroup("avg(ssp:s=3..4,)")
	if err == nil {
		t.Errorf("a trailing comma parsed: %v", g.Members)
	}
}

// Bad groups are refused naming what is wrong, before anything runs.
func TestParseGroupRefuses(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"avg(ssp:s=3)", "at least two members"},
		{"avg(ssp:s=3|ssp: s=3)", "given twice"},
		{"avg(ssp:s=5..3)", "a < b"},
		{"avg(ssp:s=3..x)", "two integers"},
		{"avg(ssp:s=1..200)", "more than 100"},
		{"avg(ssp:s=3|nope)", `member "nope"`},
		{"avg(ssp:s=3|bsp", "avg(spec|spec|…)"},
		{"avg(ssp..3|bsp)", "an option's value"},
	} {
		_, err := ParseGroup(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.in, err, c.want)
		}
	}
}
