package compress_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/compress"
)

// zeroBomb returns size bytes of zeros compressed with c as a producer
// streams them (gzip, lz4 and zstd frames that declare no content size),
// without ever holding the zeros: snappy's xerial chunks are repeated.
func zeroBomb(tb testing.TB, c compress.Compression, size int) []byte {
	piece := make([]byte, 1<<20)
	if c == compress.Snappy {
		enc, err := c.Encode(nil, piece)
		require.NoError(tb, err)
		const header = 16
		out := append([]byte{}, enc[:header]...)
		for i := 0; i < size/len(piece); i++ {
			out = append(out, enc[header:]...)
		}
		return out
	}
	var buf bytes.Buffer
	w := c.Codec().NewWriter(&buf)
	for i := 0; i < size/len(piece); i++ {
		_, err := w.Write(piece)
		require.NoError(tb, err)
	}
	require.NoError(tb, w.Close())
	return buf.Bytes()
}

// decodeAlloc returns the bytes allocated by decoding src under max.
func decodeAlloc(c compress.Compression, src []byte, max int) (uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.DecodeLimit(nil, src, max)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// TestBombAllocationBound decodes 256 MiB of zeros under a 64 MiB limit:
// the output grows with what is decoded and is never copied as it grows,
// so refusing the bomb costs about the limit (zstd adds its 8 MiB window
// and its decoder, once per pooled decoder). Growth by doubling cost about
// twice the limit.
func TestBombAllocationBound(t *testing.T) {
	const limit = 64 << 20
	for _, c := range codes {
		src := zeroBomb(t, c, 256<<20)
		n, err := decodeAlloc(c, src, limit)
		require.ErrorIs(t, err, compress.ErrTooLarge, "%s", c)
		t.Logf("%s: %d bytes in, %.2f x the limit allocated", c, len(src), float64(n)/limit)
		require.LessOrEqual(t, n, uint64(limit*12/10), "%s: allocated %d bytes under a %d-byte limit", c, n, limit)
	}
}

// BenchmarkBomb decodes 1 GiB of zeros under the default 256 MiB limit and
// reports the bytes allocated per decode, as a multiple of the limit.
func BenchmarkBomb(b *testing.B) {
	for _, c := range codes {
		src := zeroBomb(b, c, 1<<30)
		b.Run(c.String(), func(b *testing.B) {
			var total uint64
			for i := 0; i < b.N; i++ {
				n, err := decodeAlloc(c, src, compress.DefaultDecodeLimit)
				require.ErrorIs(b, err, compress.ErrTooLarge)
				total += n
			}
			b.ReportMetric(float64(total)/float64(b.N), "B-alloc/op")
			b.ReportMetric(float64(total)/float64(b.N)/compress.DefaultDecodeLimit, "x-limit/op")
		})
	}
}
