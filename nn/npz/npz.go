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
	"strconv"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/nn"
)

var npyMagic = []byte("\x93NUMPY")

// modified is every entry's timestamp: fixed, so the same arrays give the
// same bytes.
var modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Write writes ts to w as an .npz archive, one NAME.npy entry per tensor,
// in the order given.
func Write(w io.Writer, ts []nn.Tensor) error {
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

// Read reads an .npz archive of size bytes from r, in the archive's order.
func Read(r io.ReaderAt, size int64) ([]nn.Tensor, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npz: not a zip archive: %w", err)
	}
	var out []nn.Tensor
	total := 0
	for _, f := range z.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("npz: entry %q is not an .npy array", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		t, err := readNPY(rc, name, MaxValues-total)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		total += len(t.Data)
		out = append(out, t)
	}
	return out, nil
}

var (
	reDescr   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

func readNPY(r io.Reader, name string, budget int) (nn.Tensor, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil || !bytes.Equal(pre[:6], npyMagic) {
		return nn.Tensor{}, errors.New("not an NPY array (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nn.Tensor{}, err
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nn.Tensor{}, err
		}
		hlen = int(binary.LittleEndian.Uint32(l[:]))
	default:
		return nn.Tensor{}, fmt.Errorf("NPY version %d.%d", pre[6], pre[7])
	}
	if hlen > 1<<16 {
		return nn.Tensor{}, fmt.Errorf("NPY header of %d bytes", hlen)
	}
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h); err != nil {
		return nn.Tensor{}, err
	}
	hs := string(h)
	d, fo, sh := reDescr.FindStringSubmatch(hs), reFortran.FindStringSubmatch(hs), reShape.FindStringSubmatch(hs)
	if d == nil || fo == nil || sh == nil {
		return nn.Tensor{}, fmt.Errorf("NPY header %q lacks descr, fortran_order or shape", strings.TrimSpace(hs))
	}
	if d[1] != "<f4" {
		return nn.Tensor{}, fmt.Errorf("dtype %s: want little-endian float32 (<f4)", d[1])
	}
	if fo[1] != "False" {
		return nn.Tensor{}, errors.New("Fortran order: want C order")
	}
	t := nn.Tensor{Name: name}
	n := 1
	for _, f := range strings.Split(sh[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || (v > 0 && n > budget/v) {
			return nn.Tensor{}, fmt.Errorf("shape (%s): not a shape of at most %d values", sh[1], budget)
		}
		t.Shape = append(t.Shape, v)
		n *= v
	}
	buf := make([]byte, 4*n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nn.Tensor{}, fmt.Errorf("%d values of shape %v: %w", n, t.Shape, err)
	}
	if k, _ := r.Read(make([]byte, 1)); k != 0 {
		return nn.Tensor{}, fmt.Errorf("more bytes than shape %v holds", t.Shape)
	}
	t.Data = make([]float32, n)
	for i := range t.Data {
		t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return t, nil
}
