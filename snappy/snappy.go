// Package snappy is kept for compatibility with programs written for
// segmentio/kafka-go, which imported it to install the snappy codec. The
// codec lives in compress/snappy and is always available.
package snappy

import "github.com/rackfetch/kafka-go/compress/snappy"

// CompressionCodec is the snappy codec.
type CompressionCodec = snappy.Codec

// Framing selects the xerial framing of encoded data.
type Framing = snappy.Framing

const (
	Code     = 2
	Framed   = snappy.Framed
	Unframed = snappy.Unframed
)

// NewCompressionCodec returns a snappy codec writing the xerial framing the
// Java client writes.
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecFraming(Framed)
}

// NewCompressionCodecFraming returns a snappy codec with the given framing.
func NewCompressionCodecFraming(framing Framing) *CompressionCodec {
	return &CompressionCodec{Framing: framing}
}
