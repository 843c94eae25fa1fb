// Package filecap reads a file whole only after checking its size: a
// file's stat size is compared with a limit its reader states before a
// byte of it is read or a buffer allocated for it, so a file of any size
// (a sparse one of terabytes, a mistaken path to a data set) costs what
// its refusal costs. Every reader of a whole file in pacer (a job
// description, a scenario, a CA bundle, the coordinator's state, a run's
// summary) goes through it, each with a limit justified where it is set.
package filecap

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLarge is the refusal of a file above its reader's limit.
type TooLarge struct {
	Path  string
	What  string // what the file should hold, as its reader names it
	Size  int64  // its stat size
	Limit int64
	// Unsized: the stat gave no size (a pipe) or a smaller one than the
	// file turned out to hold; it was refused once it passed the limit.
	Unsized bool
}

func (e *TooLarge) Error() string {
	if e.Unsized {
		return fmt.Sprintf("%s holds more than the %d bytes a %s can take: refused", e.Path, e.Limit, e.What)
	}
	return fmt.Sprintf("%s is %d bytes, above the %d bytes a %s can take: refused before reading it", e.Path, e.Size, e.Limit, e.What)
}

// Read returns the contents of the file at path, refusing it (a
// *TooLarge, naming the file, its size and the limit) when its stat size
// is above limit. what names what the file should hold, for the error.
//
// The size is taken from the open file, not the path, so a file swapped
// after the check is still the one checked. A file the stat cannot size
// (a pipe, a process substitution, /dev/stdin) and one that grows after
// its stat are read into a buffer that grows up to limit+1 bytes, and
// refused once they fill it.
func Read(path, what string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &TooLarge{Path: path, What: what, Size: st.Size(), Limit: limit}
	}
	// One allocation of the stat size (and a byte, for the read that
	// finds the end) for a regular file that does not change; for a file
	// that does, or has no size, the buffer doubles up to limit+1.
	size := int64(512)
	if st.Mode().IsRegular() {
		size = st.Size() + 1
	}
	b := make([]byte, 0, min(size, limit+1))
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*int64(cap(b))+512, limit+1))
			copy(nb, b)
			b = nb
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil, &TooLarge{Path: path, What: what, Size: st.Size(), Limit: limit, Unsized: true}
}
