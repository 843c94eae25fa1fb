package paradigm

import (
	"fmt"
	"strconv"
	"strings"
)

// Group is several specs that a comparison reports, and races, as one
// paradigm: the DSSP paper's "averaged SSP", the mean of SSP's results over
// the thresholds s = 3…15. It is written avg(m1|m2|…), or with one integer
// option as a range, avg(ssp:s=3..15).
type Group struct {
	Members []Spec
	// Name is the group as written, each member trimmed (a range stays a
	// range, so the name stays short); empty: the members' canonical forms.
	Name string
}

// MaxGroupMembers bounds a group: each member trains once per seed, so a
// group of n costs n runs a seed.
const MaxGroupMembers = 100

// String is the group's name in reports and summary.json: Name, or the
// members' canonical forms in the order given.
func (g Group) String() string {
	if g.Name != "" {
		return g.Name
	}
	parts := make([]string, len(g.Members))
	for i, m := range g.Members {
		parts[i] = m.String()
	}
	return "avg(" + strings.Join(parts, "|") + ")"
}

// IsGroup says whether s is written as a group (avg(…)); ParseGroup parses it.
func IsGroup(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "avg(") }

// ParseGroup parses avg(m1|m2|…): at least two members, each a spec Parse
// accepts, none twice; a member may give one option as an integer range
// a..b (a < b), which stands for the members with every value from a to b.
func ParseGroup(s string) (Group, error) {
	t := strings.TrimSpace(s)
	if !IsGroup(t) || !strings.HasSuffix(t, ")") {
		return Group{}, specErr(s, "a group is written avg(spec|spec|…) or avg(ssp:s=3..15)")
	}
	body := t[len("avg(") : len(t)-1]
	var g Group
	var written []string
	seen := map[string]bool{}
	for _, part := range strings.Split(body, "|") {
		written = append(written, strings.TrimSpace(part))
		expanded, err := expandRange(strings.TrimSpace(part))
		if err != nil {
			return Group{}, specErr(s, "%s", err)
		}
		for _, m := range expanded {
			sp, err := Parse(m)
			if err != nil {
				return Group{}, specErr(s, "member %q: %v", m, err)
			}
			if seen[sp.String()] {
				return Group{}, specErr(s, "member %s is given twice: a group's mean counts each member once", sp)
			}
			seen[sp.String()] = true
			g.Members = append(g.Members, sp)
			if len(g.Members) > MaxGroupMembers {
				return Group{}, specErr(s, "more than %d members (each trains once per seed)", MaxGroupMembers)
			}
		}
	}
	if len(g.Members) < 2 {
		return Group{}, specErr(s, "a group needs at least two members (one is the paradigm itself)")
	}
	g.Name = "avg(" + strings.Join(written, "|") + ")"
	return g, nil
}

// expandRange turns "ssp:s=3..5" into ssp:s=3, ssp:s=4, ssp:s=5; a member
// without ".." is itself. One range a member.
func expandRange(m string) ([]string, error) {
	i := strings.Index(m, "..")
	if i < 0 {
		return []string{m}, nil
	}
	if strings.Count(m, "..") > 1 {
		return nil, fmt.Errorf("member %q: one range a member", m)
	}
	eq := strings.LastIndex(m[:i], "=")
	if eq < 0 {
		return nil, fmt.Errorf("member %q: a range is an option's value, as in s=3..15", m)
	}
	end := len(m)
	if j := strings.IndexByte(m[i:], ','); j >= 0 {
		end = i + j
	}
	lo, err1 := strconv.Atoi(m[eq+1 : i])
	hi, err2 := strconv.Atoi(m[i+2 : end])
	if err1 != nil || err2 != nil || lo >= hi {
		return nil, fmt.Errorf("member %q: a range is two integers a..b with a < b", m)
	}
	if hi-lo >= MaxGroupMembers {
		return nil, fmt.Errorf("member %q: more than %d members (each trains once per seed)", m, MaxGroupMembers)
	}
	out := make([]string, 0, hi-lo+1)
	for v := lo; v <= hi; v++ {
		out = append(out, m[:eq+1]+strconv.Itoa(v)+m[end:])
	}
	return out, nil
}
