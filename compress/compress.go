// Package compress holds the compression codecs of Kafka record batches,
// with the API of segmentio/kafka-go's compress package, plus whole-buffer
// Encode and bounded Decode paths that the protocol layer uses instead of
// streaming readers and writers.
package compress

import (
	"encoding"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rackfetch/kafka-go/compress/gzip"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
	"github.com/rackfetch/kafka-go/compress/lz4"
	"github.com/rackfetch/kafka-go/compress/snappy"
	"github.com/rackfetch/kafka-go/compress/zstd"
)

// Compression is the compression of a record batch, as coded in the low
// three bits of its attributes.
type Compression int8

const (
	None   Compression = 0
	Gzip   Compression = 1
	Snappy Compression = 2
	Lz4    Compression = 3
	Zstd   Compression = 4
)

// Codec returns the global codec of c, or nil for None and unknown codes.
func (c Compression) Codec() Codec {
	if i := int(c); i >= 0 && i < len(Codecs) {
		return Codecs[i]
	}
	return nil
}

func (c Compression) String() string {
	if codec := c.Codec(); codec != nil {
		return codec.Name()
	}
	if c == None {
		return "uncompressed"
	}
	return "Compression(" + strconv.Itoa(int(c)) + ")"
}

func (c Compression) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

func (c *Compression) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "none", "uncompressed":
		*c = None
		return nil
	default:
		for _, codec := range Codecs[None+1:] {
			if codec.Name() == s {
				*c = Compression(codec.Code())
				return nil
			}
		}
		if i, err := strconv.ParseInt(s, 10, 8); err == nil && i >= 0 && i < int64(len(Codecs)) {
			*c = Compression(i)
			return nil
		}
	}
	names := []string{"none", "uncompressed"}
	for _, codec := range Codecs[None+1:] {
		names = append(names, codec.Name())
	}
	return fmt.Errorf("compression format must be one of %s, not %q", strings.Join(names, ", "), b)
}

var (
	_ encoding.TextMarshaler   = Compression(0)
	_ encoding.TextUnmarshaler = (*Compression)(nil)
)

// Codec is a compression codec of Kafka messages.
// See https://cwiki.apache.org/confluence/display/KAFKA/Compression.
//
// A Codec must be safe for concurrent use by multiple goroutines.
type Codec interface {
	// Code returns the compression code of the codec.
	Code() int8

	// Name returns the human-readable name of the codec.
	Name() string

	// NewReader returns a reader decompressing data from r.
	NewReader(r io.Reader) io.ReadCloser

	// NewWriter returns a writer compressing data to w.
	NewWriter(w io.Writer) io.WriteCloser
}

// BlockCodec is a Codec with whole-buffer paths, free of streaming
// overhead. Every codec of this module implements it.
type BlockCodec interface {
	Codec

	// Encode appends the compression of src to dst.
	Encode(dst, src []byte) ([]byte, error)

	// Decode appends the decompression of src to dst, refusing more than
	// DefaultDecodeLimit bytes of output.
	Decode(dst, src []byte) ([]byte, error)

	// DecodeLimit appends the decompression of src to dst. Once the output
	// passes max bytes (max <= 0 selects DefaultDecodeLimit) it stops with
	// an error wrapping ErrTooLarge; memory is never sized from a length
	// read from src beyond what src can really produce.
	DecodeLimit(dst, src []byte, max int) ([]byte, error)
}

// ErrTooLarge is wrapped by the errors of decoding past a size limit
// (decompression bombs).
var ErrTooLarge = limit.ErrTooLarge

// DefaultDecodeLimit bounds decompressed output when the caller gives no
// limit.
const DefaultDecodeLimit = limit.Default

var (
	// GzipCodec is the global gzip codec installed in the Codecs table.
	GzipCodec gzip.Codec

	// SnappyCodec is the global snappy codec installed in the Codecs table.
	SnappyCodec snappy.Codec

	// Lz4Codec is the global lz4 codec installed in the Codecs table.
	Lz4Codec lz4.Codec

	// ZstdCodec is the global zstd codec installed in the Codecs table.
	ZstdCodec zstd.Codec

	// Codecs is the table of the codecs of the Kafka protocol, indexed by
	// compression code.
	Codecs = [...]Codec{
		None:   nil,
		Gzip:   &GzipCodec,
		Snappy: &SnappyCodec,
		Lz4:    &Lz4Codec,
		Zstd:   &ZstdCodec,
	}

	blockCodecs = [...]BlockCodec{
		Gzip:   &GzipCodec,
		Snappy: &SnappyCodec,
		Lz4:    &Lz4Codec,
		Zstd:   &ZstdCodec,
	}
)

// UnsupportedError is returned for a compression code Kafka does not define.
type UnsupportedError struct{ Code int8 }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("compress: unsupported compression code %d", e.Code)
}

func (c Compression) blockCodec() (BlockCodec, error) {
	if c > None && int(c) < len(blockCodecs) {
		return blockCodecs[c], nil
	}
	return nil, &UnsupportedError{Code: int8(c)}
}

// Encode appends the compression of src with c's global codec to dst; None
// appends src as is.
func (c Compression) Encode(dst, src []byte) ([]byte, error) {
	if c == None {
		return append(dst, src...), nil
	}
	bc, err := c.blockCodec()
	if err != nil {
		return dst, err
	}
	return bc.Encode(dst, src)
}

// Decode appends the decompression of src to dst within DefaultDecodeLimit.
func (c Compression) Decode(dst, src []byte) ([]byte, error) {
	return c.DecodeLimit(dst, src, 0)
}

// DecodeLimit appends the decompression of src to dst, failing with an
// error wrapping ErrTooLarge once the output passes max bytes (max <= 0
// selects DefaultDecodeLimit). None appends src as is, within the limit.
func (c Compression) DecodeLimit(dst, src []byte, max int) ([]byte, error) {
	if c == None {
		if len(src) > limit.Max(max) {
			return dst, ErrTooLarge
		}
		return append(dst, src...), nil
	}
	bc, err := c.blockCodec()
	if err != nil {
		return dst, err
	}
	return bc.DecodeLimit(dst, src, max)
}

// Encode appends the compression of src with codec to dst, using its
// whole-buffer path when it has one and its writer otherwise.
func Encode(codec Codec, dst, src []byte) ([]byte, error) {
	if bc, ok := codec.(BlockCodec); ok {
		return bc.Encode(dst, src)
	}
	w := &appender{b: dst}
	zw := codec.NewWriter(w)
	_, err := zw.Write(src)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	return w.b, err
}

// DecodeLimit appends the decompression of src with codec to dst within
// max bytes (max <= 0 selects DefaultDecodeLimit), using its whole-buffer
// path when it has one and its reader otherwise.
func DecodeLimit(codec Codec, dst, src []byte, max int) ([]byte, error) {
	if bc, ok := codec.(BlockCodec); ok {
		return bc.DecodeLimit(dst, src, max)
	}
	zr := codec.NewReader(&sliceReader{b: src})
	dst, err := limit.ReadAll(dst, zr, limit.Max(max), 4*len(src))
	if cerr := zr.Close(); err == nil {
		err = cerr
	}
	return dst, err
}

type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
