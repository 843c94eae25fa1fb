package proto

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Every op of the one list is documented in docs/protocol.md's table of
// control operations, and every op that table names is in the list: the
// list and the page change together.
func TestOpsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| op |"):
			inTable = true
		case inTable && !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && strings.HasPrefix(line, "| `"):
			op, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			documented[op] = true
		}
	}
	seen := map[Op]bool{}
	for _, op := range Ops {
		if seen[op] {
			t.Errorf("op %q is listed twice in Ops", op)
		}
		seen[op] = true
		if !documented[string(op)] {
			t.Errorf("op %q is not in docs/protocol.md's table of control operations", op)
		}
	}
	for op := range documented {
		if !seen[Op(op)] {
			t.Errorf("docs/protocol.md documents op %q, which is not in Ops", op)
		}
	}
	if len(documented) == 0 {
		t.Fatal("docs/protocol.md has no table of control operations (a row starting \"| op |\")")
	}
}

// The typed op travels as the same JSON a bare string did: peers of an
// earlier build (and the Python client) read and write these bytes.
func TestControlJSON(t *testing.T) {
	for _, c := range []struct {
		in   Control
		want string
	}{
		{Control{Op: OpStats}, `{"op":"stats"}`},
		{Control{Op: OpMembers, Live: []int{0, 2}, Removed: []int{1}}, `{"op":"members","live":[0,2],"removed":[1]}`},
		{Control{Op: OpBarrier, Barrier: 3}, `{"op":"barrier","barrier":3}`},
		{Control{Op: OpEnd}, `{"op":"end"}`},
	} {
		b, err := json.Marshal(c.in)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s, %v; want %s", c.in, b, err, c.want)
		}
	}
}
