// Package gzip is kept for compatibility with programs written for
// segmentio/kafka-go, which imported it to install the gzip codec. The codec
// lives in compress/gzip and is always available.
package gzip

import "github.com/rackfetch/kafka-go/compress/gzip"

const (
	Code                    = 1
	DefaultCompressionLevel = gzip.DefaultCompressionLevel
)

// CompressionCodec is the gzip codec.
type CompressionCodec = gzip.Codec

// NewCompressionCodec returns a gzip codec at the default level.
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecLevel(DefaultCompressionLevel)
}

// NewCompressionCodecLevel returns a gzip codec at the given level.
func NewCompressionCodecLevel(level int) *CompressionCodec {
	return &CompressionCodec{Level: level}
}
