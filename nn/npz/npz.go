// Package npz writes and reads NumPy's .npz archives of float32 arrays:
// a zip file holding one .npy file per array (NPY format 1.0: magic,
// version, a Python-literal header with dtype, order and shape, then the
// values). numpy.load reads what Write writes, and Read reads what
// numpy.savez writes for little-endian float32 C-order arrays; anything
// else (another dtype, Fortran order, a pickled object) is refused with
// an error naming it.
package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Tensor is one named array of an archive, its values row-major (C
// order) over Shape.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// Size is the number of values Shape holds.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

var npyMagic = []byte("\x93NUMPY")

// modified is every entry's timestamp: fixed, so the same arrays give the
// same bytes.
var modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Write writes ts to w as an .npz archive, one NAME.npy entry per tensor,
// in the order given.
func Write(w io.Writer, ts []Tensor) error {
	z := zip.NewWriter(w)
	for _, t := range ts {
		if t.Size() != len(t.Data) {
			return fmt.Errorf("npz: %s: %d values for shape %v", t.Name, len(t.Data), t.Shape)
		}
		f, err := z.CreateHeader(&zip.FileHeader{Name: t.Name + ".npy", Method: zip.Deflate, Modified: modified})
		if err != nil {
			return err
		}
		if _, err := f.Write(npyHeader(t.Shape)); err != nil {
			return err
		}
		buf := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	return z.Close()
}

// npyHeader is an NPY 1.0 header for a little-endian float32 C-order
// array, padded so the data starts at a multiple of 64 bytes.
func npyHeader(shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", sh)
	pre := len(npyMagic) + 2 + 2
	pad := 64 - (pre+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.Write(npyMagic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	return b.Bytes()
}

// MaxValues bounds the values Read accepts in one archive (256 Mi floats,
// 1 GiB): a header cannot make it allocate more.
const MaxValues = 1 << 28

// Array is one array of an archive as its headers declare it.
type Array struct {
	Name  string
	Shape []int
	Size  int // the values Shape holds
}

// Archive is an .npz archive whose headers Open has read and checked:
// each entry's NPY header, and the size the zip declares for the entry
// against the bytes that header's shape takes. None of the values have
// been read, so a caller compares Arrays with what it expects (a model's
// layout, a flat model's length) before Read allocates anything.
type Archive struct {
	Arrays []Array
	files  []*zip.File
}

// Open reads the headers of the .npz archive of size bytes in r: the
// zip's directory and every entry's NPY header, nothing more. An entry
// whose declared uncompressed size is not exactly its NPY header plus its
// shape's values is refused, as are archives of more than MaxValues
// values.
func Open(r io.ReaderAt, size int64) (*Archive, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npz: not a zip archive: %w", err)
	}
	a := &Archive{files: z.File}
	total := 0
	for _, f := range z.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("npz: entry %q is not an .npy array", f.Name)
		}
		arr, hlen, err := readHeader(f, name, MaxValues-total)
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		// The zip's size is checked against the header's, so the values
		// Read decompresses are exactly the shape's: the zip reader itself
		// refuses an entry longer or shorter than it declares.
		if want := uint64(hlen) + 4*uint64(arr.Size); f.UncompressedSize64 != want {
			return nil, fmt.Errorf("npz: %s: the zip declares %d bytes, its NPY header (shape %v) makes %d", f.Name, f.UncompressedSize64, arr.Shape, want)
		}
		total += arr.Size
		a.Arrays = append(a.Arrays, arr)
	}
	return a, nil
}

// Values is the number of values the archive's arrays declare.
func (a *Archive) Values() int {
	n := 0
	for _, arr := range a.Arrays {
		n += arr.Size
	}
	return n
}

// Read reads every array's values, in the archive's order.
func (a *Archive) Read() ([]Tensor, error) {
	out := make([]Tensor, 0, len(a.files))
	for i, f := range a.files {
		t, err := readValues(f, a.Arrays[i])
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Read reads an .npz archive of size bytes from r, in the archive's order:
// Open, then Archive.Read.
func Read(r io.ReaderAt, size int64) ([]Tensor, error) {
	a, err := Open(r, size)
	if err != nil {
		return nil, err
	}
	return a.Read()
}

var (
	reDescr   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readHeader reads the NPY header of entry f: the array it declares, of
// at most budget values, and the header's length in bytes.
func readHeader(f *zip.File, name string, budget int) (Array, int, error) {
	rc, err := f.Open()
	if err != nil {
		return Array{}, 0, err
	}
	defer rc.Close()
	return parseNPYHeader(rc, name, budget)
}

func parseNPYHeader(r io.Reader, name string, budget int) (Array, int, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil || !bytes.Equal(pre[:6], npyMagic) {
		return Array{}, 0, errors.New("not an NPY array (bad magic)")
	}
	var hlen, plen int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return Array{}, 0, err
		}
		hlen, plen = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return Array{}, 0, err
		}
		hlen, plen = int(binary.LittleEndian.Uint32(l[:])), 12
	default:
		return Array{}, 0, fmt.Errorf("NPY version %d.%d", pre[6], pre[7])
	}
	if hlen > 1<<16 {
		return Array{}, 0, fmt.Errorf("NPY header of %d bytes", hlen)
	}
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h); err != nil {
		return Array{}, 0, err
	}
	hs := string(h)
	d, fo, sh := reDescr.FindStringSubmatch(hs), reFortran.FindStringSubmatch(hs), reShape.FindStringSubmatch(hs)
	if d == nil || fo == nil || sh == nil {
		return Array{}, 0, fmt.Errorf("NPY header %q lacks descr, fortran_order or shape", strings.TrimSpace(hs))
	}
	if d[1] != "<f4" {
		return Array{}, 0, fmt.Errorf("dtype %s: want little-endian float32 (<f4)", d[1])
	}
	if fo[1] != "False" {
		return Array{}, 0, errors.New("Fortran order: want C order")
	}
	a := Array{Name: name, Size: 1}
	for _, f := range strings.Split(sh[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || (v > 0 && a.Size > budget/v) {
			return Array{}, 0, fmt.Errorf("shape (%s): not a shape of at most %d values", sh[1], budget)
		}
		a.Shape = append(a.Shape, v)
		a.Size *= v
	}
	if a.Size > budget {
		return Array{}, 0, fmt.Errorf("shape (%s): not a shape of at most %d values", sh[1], budget)
	}
	return a, plen + hlen, nil
}

// readValues reads entry f, whose header Open read as want: the header
// again (the file may have changed since), then the values, decoded a
// block at a time so that no copy of the raw bytes is held beside them.
func readValues(f *zip.File, want Array) (Tensor, error) {
	rc, err := f.Open()
	if err != nil {
		return Tensor{}, err
	}
	defer rc.Close()
	got, _, err := parseNPYHeader(rc, want.Name, want.Size)
	if err != nil {
		return Tensor{}, err
	}
	if !slices.Equal(got.Shape, want.Shape) {
		return Tensor{}, fmt.Errorf("shape %v, %v when the archive was opened", got.Shape, want.Shape)
	}
	t := Tensor{Name: want.Name, Shape: want.Shape, Data: make([]float32, want.Size)}
	buf := make([]byte, 64<<10)
	for i := 0; i < len(t.Data); {
		k := min(len(buf)/4, len(t.Data)-i)
		if _, err := io.ReadFull(rc, buf[:4*k]); err != nil {
			return Tensor{}, fmt.Errorf("%d values of shape %v: %w", want.Size, want.Shape, err)
		}
		for j := range k {
			t.Data[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		i += k
	}
	// The zip reader checks the entry's CRC once it reaches the end.
	switch k, err := rc.Read(buf[:1]); {
	case k != 0:
		return Tensor{}, fmt.Errorf("more bytes than shape %v holds", want.Shape)
	case err != nil && err != io.EOF:
		return Tensor{}, err
	}
	return t, nil
}
