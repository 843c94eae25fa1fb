package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseFailures reads failures written as the command line writes them,
// "WORKER@TIME,...", e.g. "2@30s,5@1m", for a cluster of workers workers;
// "" is none. The errors quote the entry at fault, not a flag: the caller
// names its source.
func ParseFailures(s string, workers int) ([]Failure, error) {
	var out []Failure
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		w, at, ok := strings.Cut(strings.TrimSpace(f), "@")
		p, err1 := strconv.Atoi(w)
		d, err2 := time.ParseDuration(at)
		if !ok || err1 != nil || err2 != nil || p < 0 || p >= workers || d < 0 {
			return nil, fmt.Errorf("%q is not WORKER@DURATION with 0 ≤ WORKER < %d", f, workers)
		}
		out = append(out, Failure{Worker: p, At: d})
	}
	return out, nil
}
