// Package lz4 is kept for compatibility with programs written for
// segmentio/kafka-go, which imported it to install the lz4 codec. The codec
// lives in compress/lz4 and is always available.
package lz4

import "github.com/rackfetch/kafka-go/compress/lz4"

const Code = 3

// CompressionCodec is the lz4 codec.
type CompressionCodec = lz4.Codec

// NewCompressionCodec returns the lz4 codec.
func NewCompressionCodec() *CompressionCodec {
	return &CompressionCodec{}
}
