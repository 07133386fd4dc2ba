package kafka

import (
	"testing"

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
