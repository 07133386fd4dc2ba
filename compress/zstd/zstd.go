// Package zstd implements the Kafka zstd codec (compression code 4) with
// github.com/klauspost/compress/zstd.
package zstd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

// DefaultCompressionLevel is the level used when Codec.Level is 0.
const DefaultCompressionLevel = 3

// Codec is the zstd compress.Codec. A Codec must not be copied after first
// use.
type Codec struct {
	// Level is the zstd compression level (1 to 22, mapped to the levels
	// klauspost/compress implements). Default to 3.
	Level int

	encoderPool sync.Pool // *zstd.Encoder at this codec's level
}

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 4 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "zstd" }

func (c *Codec) level() zstd.EncoderLevel {
	l := c.Level
	if l == 0 {
		l = DefaultCompressionLevel
	}
	return zstd.EncoderLevelFromZstd(l)
}

func (c *Codec) getEncoder(w io.Writer) (*zstd.Encoder, error) {
	if z, _ := c.encoderPool.Get().(*zstd.Encoder); z != nil {
		z.Reset(w)
		return z, nil
	}
	// One goroutine-free encoder per use: concurrency comes from callers.
	return zstd.NewWriter(w, zstd.WithEncoderLevel(c.level()), zstd.WithEncoderConcurrency(1),
		// An empty input still makes a frame: decoders reject empty data.
		zstd.WithZeroFrames(true))
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	z, err := c.getEncoder(w)
	if err != nil {
		return errorWriter{err}
	}
	return &writer{c: c, z: z}
}

type writer struct {
	c *Codec
	z *zstd.Encoder
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
	w.z.Reset(nil)
	w.c.encoderPool.Put(w.z)
	w.z = nil
	return err
}

type errorWriter struct{ err error }

func (w errorWriter) Write([]byte) (int, error) { return 0, w.err }
func (w errorWriter) Close() error              { return w.err }

// Encode appends src as one zstd frame to dst.
func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	z, err := c.getEncoder(nil)
	if err != nil {
		return dst, err
	}
	dst = z.EncodeAll(src, dst)
	c.encoderPool.Put(z)
	return dst, nil
}

// NewReader implements compress.Codec. Its decoder runs without goroutines
// and refuses frames with a window above 128 MiB (zstd's default limit).
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	d, err := streamDecoder()
	if err == nil {
		err = d.Reset(r)
	}
	return &reader{d: d, err: err}
}

type reader struct {
	d   *zstd.Decoder
	err error
}

func (r *reader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return r.d.Read(b)
}

func (r *reader) Close() error {
	if r.d != nil {
		r.d.Reset(nil)
		streamPool.Put(r.d)
		r.d = nil
		r.err = io.ErrClosedPipe
	}
	return nil
}

// maxWindow is the largest window accepted, zstd's own default limit
// (window log 27).
const maxWindow = 1 << 27

var (
	streamPool sync.Pool // *zstd.Decoder for NewReader
	bufferPool sync.Pool // *zstd.Decoder for DecodeLimit
)

// Concurrency 1 keeps decoders free of goroutines, so dropping one from a
// pool leaks nothing.
func streamDecoder() (*zstd.Decoder, error) {
	if d, _ := streamPool.Get().(*zstd.Decoder); d != nil {
		return d, nil
	}
	// The memory limit also bounds what the decoder inflates at once when
	// handed a *bytes.Buffer.
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(limit.Default), zstd.WithDecoderLowmem(true))
}

// bufferDecoder returns a decoder whose DecodeAll never writes past the
// capacity of the slice it is given: the output limit is that capacity.
func bufferDecoder() (*zstd.Decoder, error) {
	if d, _ := bufferPool.Get().(*zstd.Decoder); d != nil {
		return d, nil
	}
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecodeAllCapLimit(true))
}

// Decode appends the decompression of src to dst, refusing more than the
// default limit (256 MiB).
func (c *Codec) Decode(dst, src []byte) ([]byte, error) {
	return DecodeLimit(dst, src, 0)
}

// DecodeLimit is like Decode but refuses more than max bytes of output
// (max <= 0 selects the default limit) with an error wrapping
// compress.ErrTooLarge.
func (c *Codec) DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	return DecodeLimit(dst, src, max)
}

// ErrCorrupt is returned for input that is not valid zstd.
var ErrCorrupt = errors.New("zstd: corrupt input")

// maxRatio bounds the zstd expansion: a block produces at most 128 KiB and
// takes at least 4 bytes (an RLE block), so a frame declaring more than
// maxRatio times the input is corrupt. Declared sizes are never trusted
// beyond that.
const maxRatio = 32 << 10

// maxBlockSize is the most one zstd block decodes to.
const maxBlockSize = 128 << 10

// DecodeLimit appends the decompression of the zstd frames in src to dst.
//
// When the room for the output is known, the spare capacity of dst or the
// content size the frame declares (checked against max and against what
// src can produce), the frames are decoded straight into it. Otherwise, or
// when they turn out not to fit, they are streamed into a limit.Buffer that
// grows with the output actually produced: a bomb costs about max bytes and
// is decoded once, not again at every growth.
func DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	max = limit.Max(max)
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return dst, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	room := cap(dst) - len(dst)
	if h.HasFCS {
		if h.FrameContentSize > uint64(max) {
			return dst, fmt.Errorf("%w: frame declares %d bytes", limit.ErrTooLarge, h.FrameContentSize)
		}
		if h.FrameContentSize > uint64(maxRatio)*uint64(len(src)) {
			return dst, fmt.Errorf("%w: %d bytes claim %d", ErrCorrupt, len(src), h.FrameContentSize)
		}
		if fcs := int(h.FrameContentSize); room < fcs {
			room = fcs
		}
	}
	if room > max {
		room = max
	}
	if room > 0 {
		out, fit, err := decodeInto(dst, src, room)
		if fit || err != nil {
			return out, err
		}
		if room == max {
			return dst, limit.ErrTooLarge
		}
	}
	return decodeStream(dst, src, max)
}

// decodeInto decodes src into room bytes after dst in one pass; fit is
// false when the output needs more room.
func decodeInto(dst, src []byte, room int) (out []byte, fit bool, err error) {
	if cap(dst)-len(dst) < room {
		grown := make([]byte, len(dst), len(dst)+room)
		copy(grown, dst)
		dst = grown
	}
	d, err := bufferDecoder()
	if err != nil {
		return dst, false, err
	}
	defer bufferPool.Put(d)
	tail := dst[len(dst) : len(dst) : len(dst)+room]
	got, err := d.DecodeAll(src, tail)
	if err == nil {
		if len(got) > 0 && &got[:1][0] != &tail[:1][0] {
			// Not expected with the capacity limit, but stay correct.
			return append(dst, got...), true, nil
		}
		return dst[:len(dst)+len(got)], true, nil
	}
	// Running out of capacity shows either as ErrDecoderSizeExceeded or,
	// inside a block, as a generic error; a failure that close to the end
	// of the capacity means the output needs more room, others are
	// corruption.
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || room-len(got) <= maxBlockSize {
		return dst, false, nil
	}
	return dst, false, corrupt(err)
}

// streamDec is a pooled stream decoder with the reader it is fed from.
type streamDec struct {
	d   *zstd.Decoder
	src bytes.Reader
}

var streamDecPool sync.Pool // *streamDec for DecodeLimit

func decodeStream(dst, src []byte, max int) ([]byte, error) {
	s, _ := streamDecPool.Get().(*streamDec)
	if s == nil {
		d, err := streamDecoder()
		if err != nil {
			return dst, err
		}
		s = &streamDec{d: d}
	}
	defer func() {
		s.d.Reset(nil)
		s.src.Reset(nil)
		streamDecPool.Put(s)
	}()
	s.src.Reset(src)
	if err := s.d.Reset(&s.src); err != nil {
		return dst, corrupt(err)
	}
	b := limit.NewBuffer(dst, max, 4*len(src)+1024)
	if err := b.Fill(s.d); err != nil {
		if errors.Is(err, limit.ErrTooLarge) {
			return dst, err
		}
		return dst, corrupt(err)
	}
	return b.Bytes(), nil
}

func corrupt(err error) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return fmt.Errorf("%w: window above %d bytes", ErrCorrupt, maxWindow)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}
