package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The periodic lag (ReadLagInterval) of a partition being fetched comes
// from the high watermark its fetch answers carry: no ListOffsets per
// interval, which 300 partition Readers made a steady load on idle brokers.
func TestReaderReadLagFromFetchAnswers(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.ReadLagInterval = 10 * time.Millisecond
		cfg.MaxWait = 50 * time.Millisecond
	})
	rtExpect(t, r, 0, 4)
	require.Eventually(t, func() bool { return r.Stats().Lag == 6 }, 10*time.Second, 5*time.Millisecond,
		"lag after reading 4 of 10")
	b := c.Broker(1)
	listed := b.Requests(protocol.ListOffsets)
	fetches := b.Requests(protocol.Fetch)
	// Twenty more polls (20 ms each while the Reader holds records): dozens
	// of lag intervals.
	<-b.Await(protocol.Fetch, fetches+20)
	require.LessOrEqual(t, b.Requests(protocol.ListOffsets)-listed, 2,
		"ListOffsets requests while the partition is fetched")
}

// An idle partition's fetch waits at the engine for longer than
// ReadLagInterval (a fetch session leaves it out of the answers while
// nothing changes): its last high watermark is current meanwhile, and the
// periodic lag costs no ListOffsets.
func TestReaderReadLagWhileLongPolling(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.ReadLagInterval = 10 * time.Millisecond
	})
	rtExpect(t, r, 0, 10)
	b := c.Broker(1)
	hold := make(chan struct{})
	defer close(hold)
	held := b.ScriptNext(protocol.Fetch, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	<-b.Await(protocol.Fetch, held)
	listed := b.Requests(protocol.ListOffsets)
	// 50 lag intervals while the fetch waits: at most the lookups already
	// under way when the held fetch arrived (a loaded machine, the race
	// detector) land after it, not one per interval.
	assert.Never(t, func() bool { return b.Requests(protocol.ListOffsets)-listed > 2 }, 500*time.Millisecond, 10*time.Millisecond,
		"ListOffsets requests while the partition long-polls")
	assert.Equal(t, int64(0), r.Stats().Lag)
}
