package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// readerFuzzKeys are the answers FuzzReaderBrokerResponses corrupts.
var readerFuzzKeys = []protocol.ApiKey{
	protocol.Fetch, protocol.ListOffsets, protocol.Metadata, protocol.ApiVersions, protocol.OffsetForLeaderEpoch,
	protocol.FindCoordinator, protocol.JoinGroup, protocol.SyncGroup, protocol.Heartbeat, protocol.OffsetFetch,
	protocol.OffsetCommit,
}

// readerFuzzCluster is two brokers in racks a and b, t/0 led by broker 1
// with a follower in the Reader's rack b, holding a zstd batch of two
// records then a plain one of two.
func readerFuzzCluster(t testing.TB) *fakebroker.Cluster {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2, Racks: []string{"a", "b"}, RackAwareSelector: true})
	c.CreateTopic("t", 1, 2)
	for i, codec := range []compress.Compression{compress.Zstd, 0} {
		bb := protocol.NewRecordBatchBuilder()
		bb.Compression = codec
		for j := 0; j < 2; j++ {
			k := 2*i + j
			bb.Add(protocol.Record{Timestamp: int64(k + 1), Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(fmt.Sprintf("v%d", k))})
		}
		batch, err := bb.AppendTo(nil)
		require.NoError(t, err)
		c.AppendBatch("t", 0, batch)
	}
	return c
}

// readerFuzzRead reads every record of t/0 with a rack-b Reader, in a
// group or from the partition, until one read fails; it returns what was
// delivered and the error that ended it (nil when all were read).
func readerFuzzRead(c *fakebroker.Cluster, group bool, n int) ([]Message, error) {
	cfg := ReaderConfig{
		Brokers:         c.Addrs(),
		Topic:           "t",
		Rack:            "b",
		MaxWait:         50 * time.Millisecond,
		ReadBackoffMin:  5 * time.Millisecond,
		ReadBackoffMax:  20 * time.Millisecond,
		ReadLagInterval: -1,
		MaxAttempts:     2,
		Dialer:          &Dialer{ClientID: "fuzz", Timeout: time.Second},
	}
	if group {
		cfg.GroupID = "g"
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.JoinGroupBackoff = 10 * time.Millisecond
		cfg.RebalanceTimeout = time.Second
	}
	r := NewReader(cfg)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eDeadline)
	defer cancel()
	var got []Message
	for len(got) < n {
		m, err := r.ReadMessage(ctx) // commits in a group: OffsetCommit is exercised too
		if err != nil {
			return got, err
		}
		got = append(got, m)
	}
	return got, nil
}

// requireFromLog checks that msgs are records of log (whose values are
// unique), in the log's order, each once, at their offsets. A corrupted
// Fetch answer may move a batch: its base offset is outside the CRC (the
// broker assigns it), so no client can tell, and only the order of
// offsets is checked then; keys and values are under the CRC.
func requireFromLog(t *testing.T, log []protocol.Record, msgs []Message, m e2eMutation) {
	for _, msg := range msgs {
		require.True(t, msg.Topic == "t" && msg.Partition == 0, "message of %s/%d", msg.Topic, msg.Partition)
	}
	got := make([]clientFuzzFetched, len(msgs))
	for i, msg := range msgs {
		got[i] = clientFuzzFetched{offset: msg.Offset, key: string(msg.Key), value: string(msg.Value)}
	}
	requireFetchedFromLog(t, log, got, m, true)
}

// TestFuzzReaderBrokerResponsesSeeds checks that without corruption both
// Readers deliver the whole log, so that fuzzing starts from paths that
// work.
func TestFuzzReaderBrokerResponsesSeeds(t *testing.T) {
	for _, group := range []bool{false, true} {
		c := readerFuzzCluster(t)
		installMutation(c, newE2EMutation(readerFuzzKeys, 0, 0, e2eXor, 0, nil))
		log := c.Records("t", 0)
		got, err := readerFuzzRead(c, group, len(log))
		require.NoError(t, err, "group %v", group)
		requireFromLog(t, log, got, e2eMutation{})
		require.Len(t, got, len(log))
	}
}

// FuzzReaderBrokerResponses runs a rack-aware Reader, by partition or in a
// group, against a fake whose answers of one kind are corrupted: it must
// not panic, must end in bounded time, requests and allocations, and must
// deliver only records of the log, in order, once each.
func FuzzReaderBrokerResponses(f *testing.F) {
	e2eSeeds(len(readerFuzzKeys), func(op, mode byte, pos uint16, patch []byte) {
		group := op >= 5 // the keys from FindCoordinator on are only sent in a group
		f.Add(group, op, byte(0), mode, pos, patch)
	})
	f.Fuzz(func(t *testing.T, group bool, op, nth, mode byte, pos uint16, patch []byte) {
		c := readerFuzzCluster(t)
		m := newE2EMutation(readerFuzzKeys, op, nth, mode, pos, patch)
		installMutation(c, m)
		log := c.Records("t", 0)
		var got []Message
		e2eBounded(t, c, m, func() { got, _ = readerFuzzRead(c, group, len(log)) })
		requireFromLog(t, log, got, m)
	})
}
