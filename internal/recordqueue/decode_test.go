package recordqueue

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// countRecords reads the counts of v2 batch headers and stays within what
// the bytes can hold, whatever a header claims.
func TestCountRecords(t *testing.T) {
	b := protocol.NewRecordBatchBuilder()
	var data []byte
	for i := 0; i < 3; i++ {
		b.Reset()
		b.BaseOffset = int64(i * 5)
		for j := 0; j < 5; j++ {
			b.Add(protocol.Record{Value: []byte("value")})
		}
		var err error
		data, err = b.AppendTo(data)
		assert.NoError(t, err)
	}
	assert.Equal(t, 16, countRecords(data), "15 records and one to spare")
	assert.Equal(t, 11, countRecords(data[:len(data)-3]), "the cut batch is not counted")
	assert.Equal(t, 1, countRecords(nil))

	hostile := append([]byte(nil), data...)
	hostile[57], hostile[58], hostile[59], hostile[60] = 0x7f, 0xff, 0xff, 0xff
	assert.LessOrEqual(t, countRecords(hostile), len(hostile)/7+1, "a claimed 2 G records")
}

// codeError stands for the client's Kafka error type.
type codeError int16

func (e codeError) Error() string { return "kafka error" }

func testDecoder() *Decoder {
	return &Decoder{KafkaError: func(code int16) error { return codeError(code) }}
}

// The decoder's verdict on data ending inside a batch, by the fetch's
// limits and whether anything before the cut was read.
func TestDecodeCutBatch(t *testing.T) {
	var data []byte
	second := 0 // where the second batch starts
	for base := int64(0); base < 8; base += 4 {
		bb := protocol.NewRecordBatchBuilder()
		bb.BaseOffset = base
		for i := 0; i < 4; i++ {
			bb.Add(protocol.Record{Value: []byte("0123456789")})
		}
		second = len(data)
		var err error
		data, err = bb.AppendTo(data)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name    string
		records []byte
		offset  int64
		lim     Limits
		n       int
		want    error // nil: fetched again from the cut batch
	}{
		{"first batch short, within the limits", data[:second-5], 0, Limits{MaxBytes: 1e6, Asked: 1e6}, 0, ErrTruncatedBatch},
		{"first batch cut by the partition's max bytes", data[:second-5], 0, Limits{MaxBytes: 1e6, Asked: second - 5}, 0, nil},
		{"first batch cut by the response's max bytes", data[:second-5], 0, Limits{MaxBytes: 1e6, Asked: 1e6, Full: true}, 0, nil},
		{"first batch larger than MaxBytes", data[:second-5], 0, Limits{MaxBytes: second - 5, Asked: second - 5}, 0, codeError(codeMessageSizeTooLarge)},
		{"a batch past the first", data[:len(data)-5], 0, Limits{MaxBytes: 1e6, Asked: 1e6}, 4, nil},
		{"whole", data, 4, Limits{MaxBytes: 1e6, Asked: 1e6}, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &protocol.FetchResponsePartition{HighWatermark: 8, LastStableOffset: 8, Records: tc.records}
			fb, err := testDecoder().Decode(p, "t", 0, tc.offset, 0, 1, tc.lim)
			assert.Equal(t, tc.n, fb.Records())
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, tc.offset, fb.Next, "nothing skipped")
			assert.False(t, errors.Is(err, io.EOF))
		})
	}
}

// A run points into the fetched bytes: keys, values and headers as they
// were sent, null as nil, and the partition's error through KafkaError.
func TestDecodeRecords(t *testing.T) {
	bb := protocol.NewRecordBatchBuilder()
	bb.BaseOffset = 7
	bb.Add(protocol.Record{Timestamp: 1_700_000_000_000, Key: []byte("k1"), Value: []byte("v1"), Headers: []protocol.RecordHeader{{Key: "h", Value: []byte("x")}}})
	bb.Add(protocol.Record{Timestamp: 1_700_000_000_001, Value: []byte("v2")})
	data, err := bb.AppendTo(nil)
	require.NoError(t, err)

	p := &protocol.FetchResponsePartition{HighWatermark: 9, LastStableOffset: 9, Records: data}
	fb, err := testDecoder().Decode(p, "t", 3, 7, 0, 1, Limits{MaxBytes: 1e6, Asked: 1e6})
	require.NoError(t, err)
	require.Equal(t, 2, fb.Records())
	assert.Equal(t, int64(9), fb.Next)
	assert.Equal(t, int64(6), fb.Bytes)
	run := fb.Run
	assert.Equal(t, "t", run.Topic)
	assert.Equal(t, 3, run.Partition)
	assert.Equal(t, int64(9), run.HW)

	r0, r1 := run.At(0), run.At(1)
	assert.Equal(t, int64(7), r0.Offset)
	assert.Equal(t, int64(1_700_000_000_000), r0.Timestamp)
	assert.Equal(t, []byte("k1"), run.Key(r0))
	assert.Equal(t, []byte("v1"), run.Value(r0))
	assert.Equal(t, []protocol.RecordHeader{{Key: "h", Value: []byte("x")}}, run.Headers(r0))
	assert.Equal(t, int64(8), r1.Offset)
	assert.Nil(t, run.Key(r1))
	assert.Equal(t, []byte("v2"), run.Value(r1))
	assert.Nil(t, run.Headers(r1))

	p.ErrorCode = 3
	_, err = testDecoder().Decode(p, "t", 3, 7, 0, 1, Limits{MaxBytes: 1e6, Asked: 1e6})
	require.ErrorIs(t, err, codeError(3))
	assert.EqualError(t, err, "fetching t/3 at offset 7 from broker 1: kafka error")
}
