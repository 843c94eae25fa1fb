package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// DefaultBufferSize is the bufio size for each direction of a connection
// when Config.BufferSize is zero: big enough that small frames batch into
// one syscall, while large float payloads bypass it entirely.
const DefaultBufferSize = 256 << 10

// Reader decodes frames from a byte stream. It is not safe for concurrent
// use. After any error other than io.EOF the stream position is unknown:
// the caller must close the underlying connection.
type Reader struct {
	src        io.Reader
	size       int
	br         *bufio.Reader
	hdr        [HeaderSize]byte
	maxPayload int
	// piece, if set, sees each PieceFloats-sized piece of a float payload
	// as soon as it has arrived (Hooks.Floats).
	piece func(f *Frame, p []float32, off int) error
}

// PieceFloats is the size of the pieces in which a Reader with a piece
// hook reads a float payload: 256 KB, small enough that a piece is still in
// the cache when the hook reads it, large enough that the calls cost
// nothing next to the copy.
const PieceFloats = 64 << 10

// refusal is a frame refused by the piece hook: its payload has been read
// whole, so the stream is intact and the connection may go on.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

// NewReader returns a Reader with a bufSize buffer (≤ 0: DefaultBufferSize)
// that refuses payloads over maxPayload (≤ 0: DefaultMaxPayload).
func NewReader(r io.Reader, bufSize, maxPayload int) *Reader {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	return &Reader{src: r, size: bufSize, br: bufio.NewReaderSize(r, bufSize), maxPayload: limit(maxPayload)}
}

// awaitFrame waits for the next frame to start arriving on nc (the
// Reader's source), with no deadline on the wait itself. After idle (> 0)
// without a byte it calls onIdle, drops its buffer and waits on for the
// first byte unbuffered, so an idle server connection holds no buffers.
// An error is one readHeader would have returned. nc's read deadline is
// left unspecified: the caller sets the frame's own next.
func (r *Reader) awaitFrame(nc net.Conn, idle time.Duration, onIdle func()) error {
	if r.br.Buffered() > 0 {
		return nil
	}
	if idle <= 0 {
		nc.SetReadDeadline(time.Time{})
		_, err := r.br.Peek(1)
		return err
	}
	nc.SetReadDeadline(time.Now().Add(idle))
	_, err := r.br.Peek(1)
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	onIdle()
	r.br = nil
	nc.SetReadDeadline(time.Time{})
	first := make([]byte, 1)
	if _, err := io.ReadFull(r.src, first); err != nil {
		return err // io.EOF: a clean end between frames
	}
	r.br = bufio.NewReaderSize(io.MultiReader(&oneByte{b: first}, r.src), r.size)
	return nil
}

// oneByte yields the byte awaitFrame read unbuffered, then EOF (so
// io.MultiReader moves on to the connection).
type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, o.b)
	o.b = o.b[n:]
	return n, nil
}

// ReadFrame reads the next frame into f, reusing f's payload capacity. It
// returns io.EOF only when the stream ends cleanly between frames.
func (r *Reader) ReadFrame(f *Frame) error {
	h, err := r.readHeader()
	if err != nil {
		return err
	}
	return r.readPayload(&h, f)
}

// readHeader reads and validates a header; nothing is allocated before the
// lengths have been checked against the limit.
func (r *Reader) readHeader() (header, error) {
	n, err := io.ReadFull(r.br, r.hdr[:])
	if err != nil {
		if err == io.EOF && n == 0 {
			return header{}, io.EOF
		}
		return header{}, truncated(err, "header")
	}
	return parseHeader(r.hdr[:], r.maxPayload)
}

func (r *Reader) readPayload(h *header, f *Frame) error {
	h.fill(f)
	var err error
	if h.typ.CarriesFloats() {
		f.Bytes = f.Bytes[:0]
		if r.piece != nil {
			err = r.readPieces(f, f.FloatBuf(int(h.count)))
		} else {
			err = r.readFloats(f.FloatBuf(int(h.count)), r.large(int(h.count)))
		}
	} else {
		f.Floats = f.Floats[:0]
		_, err = io.ReadFull(r.br, f.byteBuf(int(h.payloadLen)))
	}
	if err != nil {
		return truncated(err, "payload")
	}
	return nil
}

// large says a float payload of n values is read past the buffer.
func (r *Reader) large(n int) bool { return 4*n >= r.size/2 }

// readPieces reads fs a piece at a time and hands each to the piece hook
// while it is warm in the cache. After a refusal the rest is still read
// (unchecked) so the next frame starts where it should.
func (r *Reader) readPieces(f *Frame, fs []float32) error {
	var refused error
	large := r.large(len(fs))
	for off := 0; off < len(fs); off += PieceFloats {
		p := fs[off:min(off+PieceFloats, len(fs))]
		if err := r.readFloats(p, large); err != nil {
			return err
		}
		if refused == nil {
			refused = r.piece(f, p, off)
		}
	}
	if refused != nil {
		return &refusal{refused}
	}
	return nil
}

// truncated classifies a short read: a stream that ended mid-frame is
// ErrTruncated; other I/O errors (deadline, reset) pass through unchanged.
func truncated(err error, part string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: stream ended inside the %s", ErrTruncated, part)
	}
	return err
}

// Writer encodes frames onto a byte stream through a buffer; nothing reaches
// the stream before Flush (or before the buffer fills). Not safe for
// concurrent use.
type Writer struct {
	dst        io.Writer
	size       int
	bw         *bufio.Writer // nil after release, until the next frame
	hdr        [HeaderSize]byte
	maxPayload int
}

// NewWriter returns a Writer with a bufSize buffer (≤ 0: DefaultBufferSize)
// that refuses to encode payloads over maxPayload (≤ 0: DefaultMaxPayload).
func NewWriter(w io.Writer, bufSize, maxPayload int) *Writer {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	return &Writer{dst: w, size: bufSize, bw: bufio.NewWriterSize(w, bufSize), maxPayload: limit(maxPayload)}
}

// release drops the buffer if it holds nothing unwritten; the next frame
// allocates a new one.
func (w *Writer) release() {
	if w.bw != nil && w.bw.Buffered() == 0 {
		w.bw = nil
	}
}

// WriteFrame buffers f's encoding and returns the frame's size on the wire.
// An invalid frame is refused before anything is written, so the stream
// stays usable after a validation error; an I/O error leaves it broken.
func (w *Writer) WriteFrame(f *Frame) (int, error) {
	h, err := f.prepare(w.maxPayload)
	if err != nil {
		return 0, err
	}
	h.put(w.hdr[:])
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(w.dst, w.size)
	}
	if _, err := w.bw.Write(w.hdr[:]); err != nil {
		return 0, err
	}
	if h.typ.CarriesFloats() {
		err = writeFloats(w.bw, f.Floats)
	} else {
		_, err = w.bw.Write(f.Bytes)
	}
	return HeaderSize + int(h.payloadLen), err
}

// Flush writes any buffered data to the stream.
func (w *Writer) Flush() error {
	if w.bw == nil {
		return nil
	}
	return w.bw.Flush()
}
