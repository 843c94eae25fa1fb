package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFailures(t *testing.T) {
	got, err := ParseFailures(" 2@30s, 0@1m ", 3)
	want := []Failure{{Worker: 2, At: 30 * time.Second}, {Worker: 0, At: time.Minute}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	if got, err := ParseFailures("  ", 3); err != nil || got != nil {
		t.Errorf("blank: %+v, %v; want none", got, err)
	}
	for _, in := range []string{"3@1s", "-1@1s", "1@-1s", "1", "x@1s", "1@soon", "1@1s,", "1@1s,,2@2s"} {
		if got, err := ParseFailures(in, 3); err == nil || !strings.Contains(err.Error(), "WORKER@DURATION with 0 ≤ WORKER < 3") {
			t.Errorf("ParseFailures(%q, 3) = %+v, %v; want an error", in, got, err)
		}
	}
}
