package kafka

// A record batch the leader sends shorter than its length, within the
// fetch's max bytes, is malformed, not a cut at max bytes: the Reader
// fetches it again only after the error backoff and returns the error to
// the application, instead of fetching it again at once for ever. Batches
// a broker cuts at the partition's or the response's max bytes are still
// only fetched again.

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/recordqueue"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rmCluster returns a one-broker cluster whose t/0 holds n batches of 4
// records, and its broker.
func rmCluster(t *testing.T, n int) (*fakebroker.Cluster, *fakebroker.Broker) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < n; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	return c, c.Broker(1)
}

// rmBatches returns the start of each whole batch of records.
func rmBatches(records []byte) (starts []int, bases []int64) {
	for pos := 0; len(records)-pos >= 12; {
		n := int(int32(binary.BigEndian.Uint32(records[pos+8:])))
		if n < 0 || 12+n > len(records)-pos {
			break
		}
		starts, bases = append(starts, pos), append(bases, int64(binary.BigEndian.Uint64(records[pos:])))
		pos += 12 + n
	}
	return starts, bases
}

// rmEditRecords makes b answer every Fetch with its default answer whose
// partitions' records edit changes; req is the request as sent.
func rmEditRecords(b *fakebroker.Broker, edit func(req *protocol.FetchRequest, rp protocol.FetchRequestPartition, records []byte) []byte) {
	b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		fr := req.(*protocol.FetchRequest)
		// The whole log up to the high watermark: edit cuts it.
		whole := *fr
		whole.MaxBytes = 1 << 30
		whole.Topics = append([]protocol.FetchRequestTopic(nil), fr.Topics...)
		for i := range whole.Topics {
			whole.Topics[i].Partitions = append([]protocol.FetchRequestPartition(nil), whole.Topics[i].Partitions...)
			for j := range whole.Topics[i].Partitions {
				whole.Topics[i].Partitions[j].PartitionMaxBytes = 1 << 30
			}
		}
		resp := b.Default(&whole, hdr).(*protocol.FetchResponse)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				p := &resp.Topics[i].Partitions[j]
				if len(p.Records) > 0 {
					p.Records = edit(fr, fr.Topics[i].Partitions[j], append([]byte(nil), p.Records...))
				}
			}
		}
		return resp, fakebroker.Action{}
	})
}

func TestReaderMalformedTruncatedBatch(t *testing.T) {
	c, b := rmCluster(t, 3)
	// The batch at offset 4 loses its second half wherever it is sent,
	// far below every max bytes of the fetch.
	var edited atomic.Int32
	rmEditRecords(b, func(_ *protocol.FetchRequest, _ protocol.FetchRequestPartition, records []byte) []byte {
		starts, bases := rmBatches(records)
		for k, base := range bases {
			if base == 4 {
				end := len(records)
				if k+1 < len(starts) {
					end = starts[k+1]
				}
				edited.Add(1)
				return records[:starts[k]+(end-starts[k])/2]
			}
		}
		return records
	})
	errLog := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.ErrorLogger = errLog })

	// The first answer holds a whole batch before the cut one: read.
	rtExpect(t, r, 0, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := r.FetchMessage(ctx)
	fetches := b.Requests(protocol.Fetch)
	t.Logf("%d Fetch requests until FetchMessage returned %v", fetches, err)
	assert.Less(t, fetches, 20, "Fetch requests until the error was returned")
	require.ErrorIs(t, err, protocol.ErrCorruptRecords)
	require.ErrorIs(t, err, recordqueue.ErrTruncatedBatch)
	var rbe *protocol.RecordBatchError
	require.ErrorAs(t, err, &rbe)
	assert.Equal(t, int64(4), rbe.Offset)
	assert.Contains(t, err.Error(), "t/0 at offset 4")
	assert.GreaterOrEqual(t, edited.Load(), int32(3))
	assert.NotEmpty(t, errLog.find("truncated"), "each attempt is logged")

	// The Reader keeps trying after the backoff, and never skips the
	// batch: fixed at the broker, its records come next.
	b.Handle(protocol.Fetch, nil)
	rtExpect(t, r, 4, 8)
}

// Batches a broker cuts at the partition's max bytes (the first one
// whole, KIP-74) or at the response's max bytes are only fetched again:
// everything is read, no error.
func TestReaderFetchCutAtMaxBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*ReaderConfig)
		cut  func(req *protocol.FetchRequest, rp protocol.FetchRequestPartition) int
	}{
		{"partition", func(cfg *ReaderConfig) { cfg.MaxBytes = 150 },
			func(_ *protocol.FetchRequest, rp protocol.FetchRequestPartition) int {
				return int(rp.PartitionMaxBytes)
			}},
		{"response", func(cfg *ReaderConfig) { cfg.MaxBufferedBytes = 150 },
			func(req *protocol.FetchRequest, _ protocol.FetchRequestPartition) int { return int(req.MaxBytes) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, b := rmCluster(t, 6)
			var cuts atomic.Int32
			rmEditRecords(b, func(req *protocol.FetchRequest, rp protocol.FetchRequestPartition, records []byte) []byte {
				starts, _ := rmBatches(records)
				first := len(records)
				if len(starts) > 1 {
					first = starts[1]
				}
				if n := max(tc.cut(req, rp), first); n < len(records) {
					if _, bases := rmBatches(records[:n]); len(starts) > len(bases) {
						cuts.Add(1)
					}
					return records[:n]
				}
				return records
			})
			errLog := &rtLogger{}
			r := rtReader(t, c, func(cfg *ReaderConfig) {
				cfg.ErrorLogger = errLog
				tc.edit(cfg)
			})
			rtExpect(t, r, 0, 24)
			assert.GreaterOrEqual(t, cuts.Load(), int32(2), "answers ending inside a batch")
			assert.Empty(t, errLog.all())
			assert.Zero(t, r.Stats().Errors)
		})
	}
}
