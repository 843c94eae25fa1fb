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

// IDXShape bounds an IDX file by the data set it belongs to, checked on the header before any
// of the body is read or allocated: the first dimension (the sample count) between 1 and MaxN,
// the others exactly Tail (28, 28 for MNIST images; none for labels).
type IDXShape struct {
	MaxN int
	Tail []int
}

func (sh IDXShape) String() string {
	out := fmt.Sprintf("N×%v with N ≤ %d", sh.Tail, sh.MaxN)
	if len(sh.Tail) == 0 {
		out = fmt.Sprintf("N with N ≤ %d", sh.MaxN)
	}
	return out
}

// check refuses dims that do not fit sh. The product it reports is overflow-safe: every
// dimension is at most maxIDXBytes, and the first is compared before anything is multiplied.
func (sh IDXShape) check(dims []int) error {
	if len(dims) != 1+len(sh.Tail) {
		return fmt.Errorf("%w: dims %v, want %s", ErrIDX, dims, sh)
	}
	for i, d := range sh.Tail {
		if dims[1+i] != d {
			return fmt.Errorf("%w: dims %v, want %s", ErrIDX, dims, sh)
		}
	}
	if dims[0] > sh.MaxN {
		per := 1
		for _, d := range sh.Tail {
			per *= d
		}
		return fmt.Errorf("%w: dims %v declare %d samples (%d bytes, %d as float32), more than the %d this data set has; refused before reading",
			ErrIDX, dims, dims[0], uint64(dims[0])*uint64(per), 4*uint64(dims[0])*uint64(per), sh.MaxN)
	}
	return nil
}

// ReadIDX parses an IDX stream, gzip-compressed or plain (told apart by the gzip magic bytes),
// of at most 1 GiB. The data must be exactly as long as the header says: short data and
// trailing bytes are both errors, since either means the file is not what its name claims.
// Readers of a known data set use ReadIDXShape, which bounds the file by the set's shape.
func ReadIDX(r io.Reader) (*IDX, error) {
	return readIDX(r, nil)
}

// ReadIDXShape is ReadIDX for a file whose header must fit shape; a header that does not is
// refused before any of the body is read.
func ReadIDXShape(r io.Reader, shape IDXShape) (*IDX, error) {
	return readIDX(r, &shape)
}

// ReadIDXHeader reads only an IDX stream's header (gzip-compressed or plain) and returns its
// dimensions: what a process that needs only the counts reads.
func ReadIDXHeader(r io.Reader) ([]int, error) {
	src, done, err := idxSource(r)
	if err != nil {
		return nil, err
	}
	defer done()
	return parseIDXHeader(src)
}

func readIDX(r io.Reader, shape *IDXShape) (*IDX, error) {
	src, done, err := idxSource(r)
	if err != nil {
		return nil, err
	}
	defer done()
	dims, err := parseIDXHeader(src)
	if err != nil {
		return nil, err
	}
	if shape != nil {
		if err := shape.check(dims); err != nil {
			return nil, err
		}
	}
	total := 1
	for _, d := range dims {
		total *= d // parseIDXHeader bounded the product
	}
	data, err := readExactly(src, total)
	if err != nil {
		return nil, fmt.Errorf("%w: dims %v: %v", ErrIDX, dims, err)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// idxSource unwraps gzip when the stream starts with its magic bytes.
func idxSource(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: reading header: %v", ErrIDX, eofAsShort(err))
	}
	if magic[0] != 0x1f || magic[1] != 0x8b {
		return br, func() {}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: gzip: %v", ErrIDX, err)
	}
	return bufio.NewReaderSize(zr, 1<<16), func() { zr.Close() }, nil
}

// parseIDXHeader reads the magic and the dimensions, each positive and their product at most
// maxIDXBytes (checked by division, so it cannot overflow).
func parseIDXHeader(r io.Reader) ([]int, error) {
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
	return dims, nil
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
