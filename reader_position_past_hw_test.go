package kafka

// A fetch answer that ends with a corrupt batch past the high watermark
// (bytes a broker may send beyond it): the records before it are
// delivered, no error reaches the application, and a follower that sent it
// is not left.

import (
	"sync/atomic"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rpCorruptBatch is a gzip batch at base whose CRC does not match.
func rpCorruptBatch(t *testing.T, base int64) []byte {
	b := protocol.NewRecordBatchBuilder()
	b.BaseOffset, b.Compression = base, compress.Gzip
	for i := 0; i < 3; i++ {
		b.Add(protocol.Record{Value: []byte("past the high watermark")})
	}
	out, err := b.AppendTo(nil)
	require.NoError(t, err)
	out[len(out)-1] ^= 0xff
	return out
}

func TestReaderCorruptBatchPastHighWatermark(t *testing.T) {
	for _, follower := range []bool{true, false} {
		name := "leader"
		if follower {
			name = "follower"
		}
		t.Run(name, func(t *testing.T) {
			c := rtRackCluster(t, true)
			rtAppend(c, 0, 0, 6)
			rtAppend(c, 0, 6, 6)
			id := int32(1)
			if follower {
				id = 2
			}
			b := c.Broker(id)
			var edited atomic.Int32
			b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
				resp := b.Default(req, hdr).(*protocol.FetchResponse)
				for i := range resp.Topics {
					for j := range resp.Topics[i].Partitions {
						p := &resp.Topics[i].Partitions[j]
						if p.ErrorCode == 0 && p.PreferredReadReplica < 0 && p.HighWatermark >= 0 {
							p.Records = append(append([]byte(nil), p.Records...), rpCorruptBatch(t, p.HighWatermark)...)
							edited.Add(1)
						}
					}
				}
				return resp, fakebroker.Action{}
			})
			log, errLog := &rtLogger{}, &rtLogger{}
			r := rtReader(t, c, func(cfg *ReaderConfig) {
				if follower {
					cfg.Rack = "b"
				}
				cfg.Logger, cfg.ErrorLogger = log, errLog
			})
			rtExpect(t, r, 0, 12) // fails on any error from FetchMessage
			rtAppend(c, 0, 12, 4)
			rtExpect(t, r, 12, 4)

			require.GreaterOrEqual(t, edited.Load(), int32(2), "no answer ended with the corrupt batch")
			st := r.Stats()
			assert.Zero(t, st.Errors, "errors: %q", errLog.all())
			assert.Empty(t, errLog.all())
			if follower {
				require.Len(t, st.Routing, 1)
				assert.Equal(t, 2, st.Routing[0].Broker, "the follower was left: %q", log.all())
				assert.Empty(t, log.find("follower failed"))
				assert.Zero(t, c.Broker(3).Requests(protocol.Fetch))
			}
		})
	}
}
