package kafka

import "github.com/rackfetch/kafka-go/compress"

// Compression is a codec id, as in kafka-go.
type Compression = compress.Compression

const (
	Gzip   Compression = compress.Gzip
	Snappy Compression = compress.Snappy
	Lz4    Compression = compress.Lz4
	Zstd   Compression = compress.Zstd
)

// CompressionCodec is a compression codec, as in kafka-go.
type CompressionCodec = compress.Codec
