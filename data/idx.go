package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IDX is a parsed IDX file of unsigned bytes (type code 0x08), the only element type the
// MNIST-family files use.
type IDX struct {
	Dims []int
	Data []byte
}

// maxIDXBytes bounds the payload a header may announce (the largest real file, the 60000×28×28
// training images, is 47 MB), so a corrupt header cannot trigger a huge allocation.
const maxIDXBytes = 1 << 30

// ErrIDX is wrapped by every error about malformed IDX content, so callers can tell bad data from
// I/O failures with errors.Is.
var ErrIDX = errors.New("malformed IDX data")

// ReadIDX parses an IDX stream, gzip-compressed or plain (told apart by the gzip magic bytes).
// The data must be exactly as long as the header says: short data and trailing bytes are both
// errors, since either means the file is not what its name claims.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil {
		return nil, fmt.Errorf("%w: reading header: %v", ErrIDX, eofAsShort(err))
	}
	var src io.Reader = br
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrIDX, err)
		}
		defer zr.Close()
		src = bufio.NewReaderSize(zr, 1<<16)
	}
	return parseIDX(src)
}

func parseIDX(r io.Reader) (*IDX, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: reading magic: %v", ErrIDX, eofAsShort(err))
	}
	if hdr[0] != 0 || hdr[1] != 0 {
		return nil, fmt.Errorf("%w: bad magic %02x%02x%02x%02x (want 0000 08 nn)", ErrIDX, hdr[0], hdr[1], hdr[2], hdr[3])
	}
	if hdr[2] != 0x08 {
		return nil, fmt.Errorf("%w: element type 0x%02x is not unsigned byte (0x08)", ErrIDX, hdr[2])
	}
	rank := int(hdr[3])
	if rank < 1 || rank > 4 {
		return nil, fmt.Errorf("%w: %d dimensions, want 1 to 4", ErrIDX, rank)
	}
	dims := make([]int, rank)
	total := 1
	for i := range dims {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("%w: reading dimension %d: %v", ErrIDX, i, eofAsShort(err))
		}
		d := binary.BigEndian.Uint32(b[:])
		if d == 0 || d > maxIDXBytes {
			return nil, fmt.Errorf("%w: dimension %d is %d", ErrIDX, i, d)
		}
		dims[i] = int(d)
		if total > maxIDXBytes/dims[i] {
			return nil, fmt.Errorf("%w: dimensions %v exceed %d bytes", ErrIDX, dims[:i+1], maxIDXBytes)
		}
		total *= dims[i]
	}
	data, err := readExactly(r, total)
	if err != nil {
		return nil, fmt.Errorf("%w: dims %v: %v", ErrIDX, dims, err)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// readExactly reads n bytes and checks that nothing follows. The buffer grows with the data
// actually present rather than trusting the header for the whole allocation up front.
func readExactly(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, min(n, 1<<24))
	got := 0
	for got < n {
		if got == len(buf) {
			grown := make([]byte, min(n, 2*len(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[got:])
		got += m
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("short data: %d of %d bytes", got, n)
			}
			return nil, err
		}
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return nil, fmt.Errorf("trailing data after %d bytes", n)
	case errors.Is(err, io.EOF):
		return buf, nil
	default:
		return nil, err
	}
}

func eofAsShort(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated (%v)", err)
	}
	return err
}

// idxImages converts an image file (N×rows×cols) to N samples of rows·cols features in [0, 1].
func idxImages(m *IDX) (x []float32, n, dim int) {
	n = m.Dims[0]
	dim = len(m.Data) / n
	x = make([]float32, len(m.Data))
	scale := pixelScale()
	for i, b := range m.Data {
		x[i] = scale[b]
	}
	return x, n, dim
}

// idxLabels checks a label file: one dimension, every label below classes.
func idxLabels(m *IDX, classes int) ([]uint8, error) {
	if len(m.Dims) != 1 {
		return nil, fmt.Errorf("%w: labels have dims %v, want one dimension", ErrIDX, m.Dims)
	}
	for i, y := range m.Data {
		if int(y) >= classes {
			return nil, fmt.Errorf("%w: label %d at index %d is not below %d classes", ErrIDX, y, i, classes)
		}
	}
	return m.Data, nil
}

// pixelScale maps a byte to byte/255. Division (not multiplication by 1/255, which rounds 255 to
// slightly above 1) keeps every value inside [0, 1] exactly.
func pixelScale() *[256]float32 {
	var t [256]float32
	for i := range t {
		t[i] = float32(i) / 255
	}
	return &t
}
