// Package zstd is kept for compatibility with programs written for
// segmentio/kafka-go, which imported it to install the zstd codec. The codec
// lives in compress/zstd and is always available.
package zstd

import "github.com/rackfetch/kafka-go/compress/zstd"

const (
	Code                    = 4
	DefaultCompressionLevel = zstd.DefaultCompressionLevel
)

// CompressionCodec is the zstd codec.
type CompressionCodec = zstd.Codec

// NewCompressionCodec returns a zstd codec at the default level (3).
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecWith(DefaultCompressionLevel)
}

// NewCompressionCodecWith returns a zstd codec at the given level.
func NewCompressionCodecWith(level int) *CompressionCodec {
	return &CompressionCodec{Level: level}
}
