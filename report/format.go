package report

import (
	"fmt"
	"strconv"
	"strings"
)

// Number formats shared by the winner sentence, the table and the plots, so a
// value reads the same everywhere in one report.

// pct formats an accuracy or share in [0, 1] as a percentage with at most one
// decimal: 0.85 → "85%", 0.8512 → "85.1%".
func pct(v float64) string {
	return trimZero(fmt.Sprintf("%.1f", v*100)) + "%"
}

// secs formats a duration in seconds with precision that shrinks as it grows.
func secs(v float64) string {
	switch {
	case v >= 100:
		return group(int64(v+0.5)) + " s"
	case v >= 10:
		return trimZero(fmt.Sprintf("%.1f", v)) + " s"
	default:
		return trimZero(fmt.Sprintf("%.2f", v)) + " s"
	}
}

// rate formats a throughput in pushes per second with about three significant digits.
func rate(v float64) string {
	switch {
	case v >= 1000:
		return group(int64(v + 0.5))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// times formats a ratio ("1.9×"); sub-decimal precision would suggest an
// accuracy a single seeded run does not have.
func times(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f×", v)
	case v < 1.095:
		return fmt.Sprintf("%.2f×", v) // "1.0× sooner" would read as a tie
	}
	return fmt.Sprintf("%.1f×", v)
}

// group formats an integer with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// andList joins names the way a sentence does: "a", "a and b", "a, b and c".
func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
