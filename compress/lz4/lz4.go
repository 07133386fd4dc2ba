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
//
// The output goes into a limit.Buffer, which grows with the output actually
// produced: a bomb costs about max bytes before it is refused.
func DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	b := limit.NewBuffer(dst, max, 4*len(src))
	var scratch []byte // the dictionary of linked blocks, when it spans pieces
	for len(src) > 0 {
		var err error
		if src, err = decodeFrame(b, src, &scratch); err != nil {
			return dst, err
		}
	}
	return b.Bytes(), nil
}

func decodeFrame(b *limit.Buffer, src []byte, scratch *[]byte) ([]byte, error) {
	if len(src) < 7 {
		return nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(src) != frameMagic {
		return nil, fmt.Errorf("%w: bad magic %#x", ErrCorrupt, binary.LittleEndian.Uint32(src))
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return nil, fmt.Errorf("%w: frame version %d", ErrCorrupt, flg>>6)
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
		return nil, fmt.Errorf("%w: block size code %d", ErrCorrupt, (bd>>4)&7)
	}
	independent := flg&0x20 != 0
	blockChecksum := flg&0x10 != 0
	contentChecksum := flg&0x04 != 0
	src = src[6:]
	if flg&0x08 != 0 { // content size
		if len(src) < 8 {
			return nil, fmt.Errorf("%w: content size cut short", ErrCorrupt)
		}
		if size := binary.LittleEndian.Uint64(src); size > uint64(b.Left()) {
			return nil, fmt.Errorf("%w: frame declares %d bytes", limit.ErrTooLarge, size)
		}
		src = src[8:]
	}
	if flg&0x01 != 0 { // dictionary id: no dictionary is ever agreed on in Kafka
		return nil, fmt.Errorf("%w: frame needs a dictionary", ErrCorrupt)
	}
	if len(src) < 1 {
		return nil, fmt.Errorf("%w: header cut short", ErrCorrupt)
	}
	src = src[1:] // header checksum, see DecodeLimit
	frameStart := b.Len()
	for {
		if len(src) < 4 {
			return nil, fmt.Errorf("%w: block size cut short", ErrCorrupt)
		}
		word := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if word == 0 { // end mark
			break
		}
		size := int(word &^ (1 << 31))
		if size > maxBlock || size > len(src) {
			return nil, fmt.Errorf("%w: block of %d bytes (max %d, %d left)", ErrCorrupt, size, maxBlock, len(src))
		}
		block := src[:size]
		src = src[size:]
		if blockChecksum {
			if len(src) < 4 {
				return nil, fmt.Errorf("%w: block checksum cut short", ErrCorrupt)
			}
			src = src[4:]
		}
		if word&(1<<31) != 0 { // stored uncompressed
			if err := store(b, block); err != nil {
				return nil, err
			}
			continue
		}
		if err := decodeBlock(b, block, maxBlock, independent, frameStart, scratch); err != nil {
			return nil, err
		}
	}
	if contentChecksum {
		if len(src) < 4 {
			return nil, fmt.Errorf("%w: content checksum cut short", ErrCorrupt)
		}
		src = src[4:]
	}
	return src, nil
}

// store appends a block stored uncompressed.
func store(b *limit.Buffer, block []byte) error {
	if len(block) > b.Left() {
		return limit.ErrTooLarge
	}
	for len(block) > 0 {
		k := copy(b.Next(len(block)), block)
		block = block[k:]
		if err := b.Commit(k); err != nil {
			return err
		}
	}
	return nil
}

// decodeBlock appends the decompression of one block, which a linked
// block does with the last 64 KiB of its frame's output as dictionary.
func decodeBlock(b *limit.Buffer, block []byte, maxBlock int, independent bool, frameStart int, scratch *[]byte) error {
	var dict []byte
	if !independent {
		n := b.Len() - frameStart
		if n > 64<<10 {
			n = 64 << 10
		}
		if *scratch == nil {
			*scratch = make([]byte, 64<<10)
		}
		dict = b.Last(n, *scratch)
	}
	// Decode into the spare room when there is some: callers that size dst
	// well then never allocate. A block that does not fit is decoded again
	// with all the room it may need.
	n, err := -1, error(nil)
	if spare := b.Spare(); len(spare) >= len(block) {
		n, err = lz4.UncompressBlockWithDict(block, spare, dict)
	}
	if n < 0 || err != nil {
		room := maxBlock
		if r := maxRatio*len(block) + 64; r < room {
			room = r
		}
		p := b.Next(room)
		if n, err = lz4.UncompressBlockWithDict(block, p, dict); err != nil {
			if len(p) < room {
				return limit.ErrTooLarge // cut short by the limit
			}
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	return b.Commit(n)
}
