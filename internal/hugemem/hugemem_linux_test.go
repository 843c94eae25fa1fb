package hugemem

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestFloatsOnHugePages reads the kernel's own account (/proc/self/smaps)
// of the mapping that holds a 64 MB block: its huge pages must cover at
// least half the block's aligned interior. Skipped where the kernel offers
// none.
func TestFloatsOnHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("no transparent huge pages on this kernel (%q, %v)", strings.TrimSpace(string(mode)), err)
	}
	x := Floats(16 << 20)
	r := interior(x)
	addr := uintptr(unsafe.Pointer(&r[0]))
	kb, err := anonHugeKB(addr)
	if err != nil {
		t.Fatal(err)
	}
	// At least half the interior: a kernel short of free 2 MB pages may
	// back some of it with small ones; advice ignored altogether (the
	// failure this guards against) leaves it at 0.
	if want := len(r) >> 11; kb < want {
		t.Errorf("the mapping holding the block has %d kB on huge pages, want at least half its interior's %d kB", kb, len(r)>>10)
	}
}

// anonHugeKB is the AnonHugePages of the mapping in /proc/self/smaps that
// contains addr.
func anonHugeKB(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			var kb int
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "AnonHugePages:"), "%d", &kb); err != nil {
				return 0, fmt.Errorf("smaps line %q: %v", line, err)
			}
			return kb, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}
