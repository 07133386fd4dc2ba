// Package gzip implements the Kafka gzip codec (compression code 1) with
// github.com/klauspost/compress/gzip.
package gzip

import (
	"bytes"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

// DefaultCompressionLevel is the level used when Codec.Level is 0.
const DefaultCompressionLevel = gzip.DefaultCompression

// Codec is the gzip compress.Codec. The zero value uses the default level.
// A Codec must not be copied after first use.
type Codec struct {
	// Level is the compression level of writers and Encode, as defined by
	// compress/gzip (1 to 9, -1 for the default, -2 for Huffman only).
	Level int

	writerPool sync.Pool // *gzip.Writer at this codec's level
}

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 1 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "gzip" }

func (c *Codec) level() int {
	if c.Level == 0 {
		return DefaultCompressionLevel
	}
	return c.Level
}

// pooledReader keeps the bytes.Reader Decode feeds it, so that decoding a
// buffer allocates nothing once the pool is warm.
type pooledReader struct {
	gzip.Reader
	src bytes.Reader
}

var readerPool sync.Pool // *pooledReader

// NewReader implements compress.Codec.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	z, _ := readerPool.Get().(*pooledReader)
	if z == nil {
		z = new(pooledReader)
	}
	rd := &reader{z: z}
	rd.err = z.Reset(r)
	return rd
}

type reader struct {
	z   *pooledReader
	err error
}

func (r *reader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.z == nil {
		return 0, io.ErrClosedPipe
	}
	return r.z.Read(b)
}

func (r *reader) Close() error {
	if r.z != nil {
		r.z.src.Reset(nil)
		readerPool.Put(r.z)
		r.z = nil
	}
	return nil
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	z, err := c.getWriter(w)
	if err != nil {
		return errorWriter{err}
	}
	return &writer{c: c, z: z}
}

func (c *Codec) getWriter(w io.Writer) (*gzip.Writer, error) {
	if z, _ := c.writerPool.Get().(*gzip.Writer); z != nil {
		z.Reset(w)
		return z, nil
	}
	return gzip.NewWriterLevel(w, c.level())
}

type writer struct {
	c *Codec
	z *gzip.Writer
}

func (w *writer) Write(b []byte) (int, error) {
	if w.z == nil {
		return 0, io.ErrClosedPipe
	}
	return w.z.Write(b)
}

func (w *writer) Close() error {
	if w.z == nil {
		return nil
	}
	err := w.z.Close()
	w.z.Reset(io.Discard) // don't keep the caller's writer alive in the pool
	w.c.writerPool.Put(w.z)
	w.z = nil
	return err
}

type errorWriter struct{ err error }

func (w errorWriter) Write([]byte) (int, error) { return 0, w.err }
func (w errorWriter) Close() error              { return w.err }

// appender is an io.Writer appending to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// Encode appends the gzip compression of src to dst.
func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	a := &appender{b: dst}
	z, err := c.getWriter(a)
	if err != nil {
		return dst, err
	}
	_, err = z.Write(src)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	z.Reset(io.Discard)
	c.writerPool.Put(z)
	return a.b, err
}

// Decode appends the decompression of src to dst, refusing more than the
// default limit (256 MiB).
func (c *Codec) Decode(dst, src []byte) ([]byte, error) {
	return c.DecodeLimit(dst, src, 0)
}

// DecodeLimit appends the decompression of src to dst. It fails with an
// error wrapping compress.ErrTooLarge once the output passes max bytes
// (max <= 0 selects the default limit); memory grows with the output
// actually produced, never by a size read from src.
func (c *Codec) DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	z, _ := readerPool.Get().(*pooledReader)
	if z == nil {
		z = new(pooledReader)
	}
	defer func() {
		z.src.Reset(nil)
		readerPool.Put(z)
	}()
	z.src.Reset(src)
	if err := z.Reset(&z.src); err != nil {
		return dst, err
	}
	return limit.ReadAll(dst, &z.Reader, limit.Max(max), 4*len(src))
}
