// Package snappy implements the Kafka snappy codec (compression code 2).
//
// Kafka carries snappy in two forms: the xerial framing written by the Java
// client (snappy-java's SnappyOutputStream: an 8-byte magic, two int32
// versions, then chunks of an int32 size and a raw snappy block) and a plain
// raw snappy block (librdkafka and others). Decoding accepts both; encoding
// writes the xerial framing unless Framing is Unframed.
package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

// Framing selects whether encoded data carries the xerial framing.
type Framing int

const (
	Framed Framing = iota
	Unframed
)

// Compression selects the snappy encoder's effort; every level writes plain
// snappy blocks that any snappy decoder reads.
type Compression int

const (
	DefaultCompression Compression = iota
	FasterCompression
	BetterCompression
	BestCompression
)

// Codec is the snappy compress.Codec. The zero value writes xerial-framed
// data at the default level.
type Codec struct {
	// Framing of encoded data. Default to Framed.
	Framing Framing

	// Compression level. Default to DefaultCompression.
	Compression Compression
}

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 2 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "snappy" }

// xerialHeader starts every xerial-framed stream: the magic, then version 1
// and minimum compatible version 1 as big-endian int32s.
var xerialHeader = [16]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

// xerialBlockSize is the uncompressed size of each chunk, snappy-java's
// default block size.
const xerialBlockSize = 32 << 10

// maxRatio bounds the snappy expansion: the densest element, a 3-byte copy,
// produces 64 bytes. A block declaring more than maxRatio times its size is
// corrupt, so its declared length is never trusted beyond that.
const maxRatio = 22

// ErrCorrupt is returned for input that is not valid snappy.
var ErrCorrupt = errors.New("snappy: corrupt input")

func (c *Codec) encodeBlock(dst, src []byte) []byte {
	n := s2.MaxEncodedLen(len(src))
	dst = limit.Grow(dst, n)
	tail := dst[len(dst) : len(dst)+n]
	var out []byte
	switch c.Compression {
	case BetterCompression:
		out = s2.EncodeSnappyBetter(tail, src)
	case BestCompression:
		out = s2.EncodeSnappyBest(tail, src)
	default:
		out = s2.EncodeSnappy(tail, src)
	}
	return dst[:len(dst)+len(out)]
}

// Encode appends the snappy compression of src to dst.
func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	if s2.MaxEncodedLen(len(src)) < 0 {
		return dst, fmt.Errorf("snappy: %d bytes is too large to encode", len(src))
	}
	if c.Framing == Unframed {
		return c.encodeBlock(dst, src), nil
	}
	dst = append(dst, xerialHeader[:]...)
	for len(src) > 0 {
		chunk := src
		if len(chunk) > xerialBlockSize {
			chunk = chunk[:xerialBlockSize]
		}
		src = src[len(chunk):]
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = c.encodeBlock(dst, chunk)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// Decode appends the decompression of src (xerial-framed or a raw block)
// to dst, refusing more than the default limit (256 MiB).
func (c *Codec) Decode(dst, src []byte) ([]byte, error) {
	return DecodeLimit(dst, src, 0)
}

// DecodeLimit is like Decode but refuses more than max bytes of output
// (max <= 0 selects the default limit) with an error wrapping
// compress.ErrTooLarge.
func (c *Codec) DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	return DecodeLimit(dst, src, max)
}

// DecodeLimit appends the decompression of src, xerial-framed or a raw
// snappy block, to dst; see Codec.DecodeLimit. Every block declares its
// decoded length, so the output size is summed (and checked against max
// and against what each block can produce) before anything is allocated,
// and the output is allocated once, at that size.
func DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	max = limit.Max(max)
	total := 0
	err := eachBlock(src, func(block []byte) error {
		n, err := decodedLen(block)
		if err != nil {
			return err
		}
		if total += n; total > max {
			return fmt.Errorf("%w: snappy blocks of %d bytes and more", limit.ErrTooLarge, total)
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) < total {
		grown := make([]byte, len(dst), len(dst)+total)
		copy(grown, dst)
		dst = grown
	}
	err = eachBlock(src, func(block []byte) error {
		n, _ := s2.DecodedLen(block)
		out, err := s2.Decode(dst[len(dst):len(dst)+n], block)
		if err != nil {
			return ErrCorrupt
		}
		dst = dst[:len(dst)+len(out)]
		return nil
	})
	return dst, err
}

// eachBlock calls fn with each raw snappy block of src: src itself, or
// the chunks of its xerial framing.
func eachBlock(src []byte, fn func(block []byte) error) error {
	if !bytes.HasPrefix(src, xerialHeader[:8]) {
		return fn(src)
	}
	if len(src) < len(xerialHeader) {
		return fmt.Errorf("%w: xerial header cut short", ErrCorrupt)
	}
	src = src[len(xerialHeader):]
	for len(src) > 0 {
		if len(src) < 4 {
			return fmt.Errorf("%w: xerial chunk size cut short", ErrCorrupt)
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return fmt.Errorf("%w: xerial chunk of %d bytes with %d left", ErrCorrupt, n, len(src))
		}
		if err := fn(src[:n]); err != nil {
			return err
		}
		src = src[n:]
	}
	return nil
}

// decodedLen returns the length a raw snappy block declares, refusing one
// it cannot produce.
func decodedLen(block []byte) (int, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return 0, ErrCorrupt
	}
	if n > maxRatio*len(block) {
		return 0, fmt.Errorf("%w: %d-byte block claims %d bytes", ErrCorrupt, len(block), n)
	}
	return n, nil
}

// NewReader implements compress.Codec. The reader decodes the whole input
// on its first Read (within the default limit): Kafka payloads are whole
// buffers, and a raw block cannot be decoded piecewise anyway.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	s, _ := readerPool.Get().(*readState)
	if s == nil {
		s = new(readState)
	}
	s.r, s.err, s.off, s.out, s.in = r, nil, 0, s.out[:0], s.in[:0]
	return &reader{s}
}

var readerPool sync.Pool // *readState

type readState struct {
	r       io.Reader
	in, out []byte
	off     int
	err     error
}

func (s *readState) fill() {
	if s.r == nil {
		return
	}
	r := s.r
	s.r = nil
	var err error
	// The compressed input is bounded by the default limit as well.
	if s.in, err = limit.ReadAll(s.in[:0], r, limit.Default, 4096); err != nil {
		s.err = err
		return
	}
	if s.out, err = DecodeLimit(s.out[:0], s.in, 0); err != nil {
		s.err = err
	}
}

type reader struct{ s *readState }

func (x *reader) Read(b []byte) (int, error) {
	s := x.s
	if s == nil {
		return 0, io.ErrClosedPipe
	}
	s.fill()
	if s.err != nil {
		return 0, s.err
	}
	if s.off >= len(s.out) {
		return 0, io.EOF
	}
	n := copy(b, s.out[s.off:])
	s.off += n
	return n, nil
}

func (x *reader) Close() error {
	if s := x.s; s != nil {
		x.s = nil
		s.r = nil
		readerPool.Put(s)
	}
	return nil
}

// NewWriter implements compress.Codec. Data is buffered and encoded on
// Close, which writes it to w.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	return &writer{c: c, w: w}
}

type writer struct {
	c   *Codec
	w   io.Writer
	buf []byte
}

func (x *writer) Write(b []byte) (int, error) {
	if x.w == nil {
		return 0, io.ErrClosedPipe
	}
	x.buf = append(x.buf, b...)
	return len(b), nil
}

func (x *writer) Close() error {
	if x.w == nil {
		return nil
	}
	w := x.w
	x.w = nil
	out, err := x.c.Encode(nil, x.buf)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
