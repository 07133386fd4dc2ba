package protocol

import (
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bytes at or past the high watermark (MaxOffset) are not the reader's:
// whatever they hold, they end the data like a cut-off batch, without a
// CRC check, decompression or decoding.

// recPastHW returns corrupt entries starting at offset base, by name.
func recPastHW(t *testing.T, base int64) map[string][]byte {
	t.Helper()
	good := recBatch(t, base, compress.None, recSeq(base, 3), nil)
	crc := append([]byte(nil), good...)
	crc[len(crc)-2] ^= 0x40 // a value byte: the CRC no longer matches

	// A gzip batch whose CRC is right but whose payload is no gzip: only
	// decompressing it can fail.
	gz := append([]byte(nil), good...)
	binary.BigEndian.PutUint16(gz[21:], uint16(compress.Gzip))
	for i := RecordBatchHeaderSize; i < len(gz); i++ {
		gz[i] = 0xA5
	}
	recResign(gz)

	// CRC right, record framing wrong: only decoding can fail.
	frame := append([]byte(nil), good...)
	frame[RecordBatchHeaderSize] = 0x7f // first record's length: far too long
	recResign(frame)

	negative := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(negative[57:], 0xffffffff)
	recResign(negative)

	badLen := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(badLen[8:], 3)

	magic := append([]byte(nil), good...)
	magic[16] = 9

	huge := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(huge[8:], 1<<30) // announces 1 GiB: looks cut

	legacy, err := AppendMessageSet(nil, 1, compress.None, recSeq(base, 2))
	require.NoError(t, err)
	legacy[len(legacy)-1] ^= 1

	wrapper, err := AppendMessageSet(nil, 1, compress.Snappy, recSeq(base, 4))
	require.NoError(t, err)
	wrapper[len(wrapper)-3] ^= 0x10

	return map[string][]byte{
		"crc mismatch":        crc,
		"garbage gzip":        gz,
		"bad record framing":  frame,
		"negative count":      negative,
		"bad length":          badLen,
		"unknown magic":       magic,
		"huge length":         huge,
		"legacy crc mismatch": legacy,
		"legacy wrapper":      wrapper,
		"offset only":         good[:8],
		"random bytes":        append(binary.BigEndian.AppendUint64(nil, uint64(base)), 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
	}
}

func TestRecordsPastHighWatermarkIgnored(t *testing.T) {
	for _, c := range recCodecs {
		var valid []byte
		for base := int64(0); base < 20; base += 10 {
			valid = append(valid, recBatch(t, base, c, recSeq(base, 10), nil)...)
		}
		for name, tail := range recPastHW(t, 20) {
			for _, hw := range []int64{20, 15} {
				data := append(append([]byte(nil), valid...), tail...)
				for _, reuse := range []bool{false, true} {
					got, r, err := recReadAll(data, RecordReadOptions{MaxOffset: hw, ReuseBuffers: reuse})
					require.NoError(t, err, "%s, %s, hw %d", c, name, hw)
					require.Equal(t, int(hw), len(got), "%s, %s, hw %d: %v", c, name, hw, recOffsets(got))
					assert.Equal(t, hw, r.NextOffset(), "%s, %s", c, name)
					assert.False(t, r.Truncated(), "%s, %s: the bytes past the HW are not a cut batch", c, name)
					_, need := r.NeedMoreBytes()
					assert.False(t, need, "%s, %s", c, name)
				}
			}
		}
	}
}

// The same corrupt bytes below the high watermark are an error, as ever:
// only what lies past it is ignored.
func TestRecordsCorruptBelowHighWatermarkFails(t *testing.T) {
	valid := recBatch(t, 0, compress.Lz4, recSeq(0, 20), nil)
	for name, tail := range recPastHW(t, 20) {
		switch name {
		case "huge length", "offset only":
			continue // a cut batch: the end of the data, below the HW too
		}
		data := append(append([]byte(nil), valid...), tail...)
		got, _, err := recReadAll(data, RecordReadOptions{MaxOffset: 30})
		var be *RecordBatchError
		require.True(t, errors.As(err, &be), "%s: got %v", name, err)
		// (A legacy set fails at the corrupt message: 21, or 23 for the
		// wrapper, which carries its last offset.)
		assert.GreaterOrEqual(t, be.Offset, int64(20), name)
		require.GreaterOrEqual(t, len(got), 20, name)
		assert.LessOrEqual(t, len(got), 21, name)
		assert.Equal(t, recOffsets(recSeq(0, 20)), recOffsets(got[:20]), name)
	}
}

// The first entry of the data past the high watermark: nothing to read,
// and no claim that max bytes is too small for it.
func TestRecordsFirstBatchPastHighWatermark(t *testing.T) {
	for name, tail := range recPastHW(t, 7) {
		got, r, err := recReadAll(tail, RecordReadOptions{MinOffset: 7, MaxOffset: 7})
		require.NoError(t, err, name)
		assert.Empty(t, got, name)
		assert.Equal(t, int64(7), r.NextOffset(), name)
		_, need := r.NeedMoreBytes()
		assert.False(t, need, name)
	}
}

// Under read_committed the bound is the last stable offset: an open
// transaction's batch past it, corrupt or not, is never decoded.
func TestRecordsPastLastStableOffsetIgnored(t *testing.T) {
	data := recBatch(t, 0, compress.None, recSeq(0, 5), nil)
	data = append(data, recBatch(t, 5, compress.Zstd, recSeq(5, 5), recTxn(3))...)
	tail := recPastHW(t, 10)["crc mismatch"]
	open := recBatch(t, 10, compress.Gzip, recSeq(10, 5), recTxn(4))
	open[len(open)-1] ^= 0xff
	data = append(append(data, open...), tail...)
	got, r, err := recReadAll(data, RecordReadOptions{MaxOffset: 10, IsolationLevel: 1})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, recOffsets(got))
	assert.Equal(t, int64(10), r.NextOffset())
}

// Ignoring the bytes past the high watermark costs no allocation: with
// ReuseBuffers, reading the data again allocates nothing.
func TestRecordsPastHighWatermarkNoAllocs(t *testing.T) {
	data := recBatch(t, 0, compress.Snappy, recSeq(0, 50), nil)
	data = append(data, recPastHW(t, 50)["garbage gzip"]...)
	var r RecordReader
	opts := RecordReadOptions{MaxOffset: 50, ReuseBuffers: true}
	read := func() {
		r.Reset(data, opts)
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 50 {
			t.Fatalf("%d records", n)
		}
	}
	read()
	assert.Zero(t, testing.AllocsPerRun(20, read))
}

// FuzzRecordsPastHighWatermark appends arbitrary bytes, relabelled to start
// at or past the high watermark, to valid batches: the reader returns
// exactly what it returns without them, and no error.
func FuzzRecordsPastHighWatermark(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint8(0))
	f.Add(make([]byte, 70), uint8(1), uint8(3))
	crc := recBatch(f, 30, compress.Gzip, recSeq(30, 4), nil)
	crc[len(crc)-1] ^= 1
	f.Add(crc, uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, tail []byte, hwSel, past uint8) {
		var valid []byte
		for base := int64(0); base < 30; base += 10 {
			valid = append(valid, recBatch(t, base, recCodecs[int(base/10)%len(recCodecs)], recSeq(base, 10), nil)...)
		}
		hw := []int64{10, 20, 30, 25}[hwSel%4]
		if len(tail) >= 8 {
			tail = append([]byte(nil), tail...)
			binary.BigEndian.PutUint64(tail, uint64(hw+int64(past)))
		}
		opts := RecordReadOptions{MaxOffset: hw, MaxDecodedSize: 1 << 20}
		want, wr, err := recReadAll(valid, opts)
		require.NoError(t, err)
		got, gr, err := recReadAll(append(append([]byte(nil), valid...), tail...), opts)
		require.NoError(t, err)
		if len(tail) >= 8 || hw < 30 {
			// (A tail too short to hold an offset is a cut entry.)
			assert.False(t, gr.Truncated())
		}
		require.Equal(t, recOffsets(want), recOffsets(got))
		assert.Equal(t, wr.NextOffset(), gr.NextOffset())
	})
}
