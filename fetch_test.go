package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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

// fill writes every field of the Message it is given: FetchBatchInto reuses
// the caller's Messages, so nothing of the previous message may survive.
func TestQueuedRunFillOverwritesEveryField(t *testing.T) {
	buf := []byte("k1v1v2")
	run := &queuedRun{
		topic: "t", partition: 3, hw: 9,
		bufs: [][]byte{buf},
		hdrs: []Header{{Key: "h", Value: []byte("x")}},
		recs: []compactRecord{
			{offset: 7, timestamp: 1_700_000_000_000, key: span{n: 2}, value: span{off: 2, n: 2}, nhdrs: 1},
			{offset: 8, timestamp: -1, key: span{n: -1}, value: span{off: 4, n: 2}},
		},
	}
	var m Message
	run.fill(0, &m)
	assert.Equal(t, Message{
		Topic: "t", Partition: 3, Offset: 7, HighWaterMark: 9,
		Key: []byte("k1"), Value: []byte("v1"),
		Headers: []Header{{Key: "h", Value: []byte("x")}},
		Time:    time.UnixMilli(1_700_000_000_000),
	}, m)

	m.WriterData = "left by the application"
	run.fill(1, &m)
	assert.Equal(t, Message{Topic: "t", Partition: 3, Offset: 8, HighWaterMark: 9, Value: []byte("v2")}, m)
}
