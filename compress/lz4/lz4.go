// Package lz4 implements the Kafka lz4 codec (compression code 3): the LZ4
// frame format, through github.com/pierrec/lz4/v4.
package lz4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pierrec/lz4/v4"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

// Codec is the lz4 compress.Codec.
type Codec struct{}

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 3 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "lz4" }

var (
	readerPool sync.Pool // *lz4.Reader
	writerPool sync.Pool // *lz4.Writer
)

// NewReader implements compress.Codec with pierrec/lz4's streaming reader.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	z, _ := readerPool.Get().(*lz4.Reader)
	if z == nil {
		z = lz4.NewReader(r)
	} else {
		z.Reset(r)
	}
	return &reader{z}
}

type reader struct{ z *lz4.Reader }

func (r *reader) Read(b []byte) (int, error) {
	if r.z == nil {
		return 0, io.ErrClosedPipe
	}
	return r.z.Read(b)
}

func (r *reader) Close() error {
	if r.z != nil {
		r.z.Reset(nil)
		readerPool.Put(r.z)
		r.z = nil
	}
	return nil
}

// NewWriter implements compress.Codec with pierrec/lz4's streaming writer,
// using 64 KiB blocks as the Java client does.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	z, _ := writerPool.Get().(*lz4.Writer)
	if z == nil {
		z = lz4.NewWriter(w)
		if err := z.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			return errorWriter{err}
		}
	} else {
		z.Reset(w)
	}
	return &writer{z}
}

type writer struct{ z *lz4.Writer }

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
	writerPool.Put(w.z)
	w.z = nil
	return err
}

type errorWriter struct{ err error }

func (w errorWriter) Write([]byte) (int, error) { return 0, w.err }
func (w errorWriter) Close() error              { return w.err }

// ErrCorrupt is returned for input that is not a valid LZ4 frame.
var ErrCorrupt = errors.New("lz4: corrupt frame")

const (
	frameMagic = 0x184D2204
	blockSize  = 64 << 10
	// flagsV1Indep is the FLG byte Encode writes: version 01, independent
	// blocks, no checksums, no content size. bd64K is the BD byte for 64 KiB
	// blocks, and headerChecksum is (xxh32(FLG, BD) >> 8) & 0xff for these
	// two bytes.
	flagsV1Indep   = 0x60
	bd64K          = 0x40
	headerChecksum = 0x82
	// maxRatio bounds LZ4 expansion: past the first bytes of a sequence,
	// each extra byte of match length adds at most 255 bytes of output.
	maxRatio = 256
)

var compressorPool = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// Encode appends src as one LZ4 frame (64 KiB independent blocks, no
// checksums: Kafka's batch CRC covers the bytes) to dst.
func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	dst = append(dst, 0x04, 0x22, 0x4d, 0x18, flagsV1Indep, bd64K, headerChecksum)
	comp := compressorPool.Get().(*lz4.Compressor)
	defer compressorPool.Put(comp)
	for len(src) > 0 {
		block := src
		if len(block) > blockSize {
			block = block[:blockSize]
		}
		src = src[len(block):]
		bound := lz4.CompressBlockBound(len(block))
		dst = limit.Grow(dst, 4+bound)
		at := len(dst)
		n, err := comp.CompressBlock(block, dst[at+4:at+4+bound])
		if err != nil {
			return dst, err
		}
		if n == 0 || n >= len(block) {
			// Incompressible: store the block raw, flagged by the high bit.
			binary.LittleEndian.PutUint32(dst[at:at+4], uint32(len(block))|1<<31)
			dst = append(dst[:at+4], block...)
			continue
		}
		binary.LittleEndian.PutUint32(dst[at:at+4], uint32(n))
		dst = dst[:at+4+n]
	}
	return binary.LittleEndian.AppendUint32(dst, 0), nil // end mark
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

// DecodeLimit appends the decompression of the LZ4 frames in src to dst.
//
// The frame header checksum is not verified: Kafka before 0.10 (message
// format v0) computed it over the wrong bytes, and the record batch CRC
// already covers the data. Block and content checksums are skipped for the
// same reason. Dependent (linked) blocks are supported.
func DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	max = limit.Max(max)
	start := len(dst)
	for len(src) > 0 {
		var err error
		if dst, src, err = decodeFrame(dst, src, max-(len(dst)-start)); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func decodeFrame(dst, src []byte, max int) ([]byte, []byte, error) {
	if len(src) < 7 {
		return dst, nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(src) != frameMagic {
		return dst, nil, fmt.Errorf("%w: bad magic %#x", ErrCorrupt, binary.LittleEndian.Uint32(src))
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return dst, nil, fmt.Errorf("%w: frame version %d", ErrCorrupt, flg>>6)
	}
	var maxBlock int
	switch (bd >> 4) & 7 {
	case 4:
		maxBlock = 64 << 10
	case 5:
		maxBlock = 256 << 10
	case 6:
		maxBlock = 1 << 20
	case 7:
		maxBlock = 4 << 20
	default:
		return dst, nil, fmt.Errorf("%w: block size code %d", ErrCorrupt, (bd>>4)&7)
	}
	independent := flg&0x20 != 0
	blockChecksum := flg&0x10 != 0
	contentChecksum := flg&0x04 != 0
	src = src[6:]
	if flg&0x08 != 0 { // content size
		if len(src) < 8 {
			return dst, nil, fmt.Errorf("%w: content size cut short", ErrCorrupt)
		}
		if size := binary.LittleEndian.Uint64(src); size > uint64(max) {
			return dst, nil, fmt.Errorf("%w: frame declares %d bytes", limit.ErrTooLarge, size)
		}
		src = src[8:]
	}
	if flg&0x01 != 0 { // dictionary id: no dictionary is ever agreed on in Kafka
		return dst, nil, fmt.Errorf("%w: frame needs a dictionary", ErrCorrupt)
	}
	if len(src) < 1 {
		return dst, nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	src = src[1:] // header checksum, see DecodeLimit
	frameStart := len(dst)
	for {
		if len(src) < 4 {
			return dst, nil, fmt.Errorf("%w: block size cut short", ErrCorrupt)
		}
		word := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if word == 0 { // end mark
			break
		}
		size := int(word &^ (1 << 31))
		if size > maxBlock || size > len(src) {
			return dst, nil, fmt.Errorf("%w: block of %d bytes (max %d, %d left)", ErrCorrupt, size, maxBlock, len(src))
		}
		block := src[:size]
		src = src[size:]
		if blockChecksum {
			if len(src) < 4 {
				return dst, nil, fmt.Errorf("%w: block checksum cut short", ErrCorrupt)
			}
			src = src[4:]
		}
		if word&(1<<31) != 0 { // stored uncompressed
			if len(dst)-frameStart+size > max {
				return dst, nil, limit.ErrTooLarge
			}
			dst = append(dst, block...)
			continue
		}
		dict := []byte(nil)
		if !independent {
			dict = dst[frameStart:]
			if len(dict) > 64<<10 {
				dict = dict[len(dict)-64<<10:]
			}
		}
		// Decode into the spare capacity when there is some: callers that
		// size dst well then never allocate. A block that does not fit is
		// decoded again with all the room it may need.
		n, err := -1, error(nil)
		if spare := cap(dst) - len(dst); spare >= size {
			n, err = lz4.UncompressBlockWithDict(block, dst[len(dst):cap(dst)], dict)
		}
		if n < 0 || err != nil {
			room := maxBlock
			if r := maxRatio*size + 64; r < room {
				room = r
			}
			dst = limit.Grow(dst, room)
			if !independent {
				dict = dst[len(dst)-len(dict):]
			}
			n, err = lz4.UncompressBlockWithDict(block, dst[len(dst):len(dst)+room], dict)
		}
		if err != nil {
			return dst, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		dst = dst[:len(dst)+n]
		if len(dst)-frameStart > max {
			return dst, nil, limit.ErrTooLarge
		}
	}
	if contentChecksum {
		if len(src) < 4 {
			return dst, nil, fmt.Errorf("%w: content checksum cut short", ErrCorrupt)
		}
		src = src[4:]
	}
	return dst, src, nil
}
