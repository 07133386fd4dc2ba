package kafka

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// followerReaders starts n partition Readers of one share in rack b, each
// on a partition led by broker 1 whose rack-b follower is broker 2, with
// dialer, and reads the two records of each.
func followerReaders(t *testing.T, c *fakebroker.Cluster, n int, dialer *Dialer) []*Reader {
	t.Helper()
	readers := make([]*Reader, n)
	for i := range readers {
		p := 3 * i // replicas 1, 2, 3: led by broker 1
		c.AppendRecords("t", int32(p), "x", "y")
		readers[i] = rtReader(t, c, func(cfg *ReaderConfig) {
			cfg.Partition, cfg.Rack, cfg.MaxFollowerLag = p, "b", 2*time.Second
			if dialer != nil {
				cfg.Dialer = dialer
			}
		})
	}
	ctx := rtCtx(t)
	for _, r := range readers {
		for j := 0; j < 2; j++ {
			_, err := r.FetchMessage(ctx)
			require.NoError(t, err)
		}
	}
	return readers
}

// onBroker waits until every partition of readers reads from broker id.
func onBroker(t *testing.T, readers []*Reader, id int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, r := range readers {
			if rt := r.Stats().Routing; len(rt) != 1 || rt[0].Broker != id {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "every partition on broker %d", id)
}

// brokerRequests counts the ListOffsets and Metadata requests c's brokers
// received.
func brokerRequests(c *fakebroker.Cluster) (listOffsets, metadata int) {
	for _, b := range c.Brokers() {
		listOffsets += b.Requests(protocol.ListOffsets)
		metadata += b.Requests(protocol.Metadata)
	}
	return listOffsets, metadata
}

// idleFollowerRequests starts n partition Readers of one share in rack b,
// each on a partition led by broker 1 and read from its rack-b follower
// (broker 2), lets them read to the end, and returns the ListOffsets and
// Metadata requests the brokers saw during window while they idled.
func idleFollowerRequests(t *testing.T, n int, window time.Duration) (listOffsets, metadata int) {
	t.Helper()
	c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, 3*n, 3)
	readers := followerReaders(t, c, n, nil)
	onBroker(t, readers, 2)
	lo0, md0 := brokerRequests(c)
	<-time.After(window) // the measurement window, not a synchronization
	lo1, md1 := brokerRequests(c)
	return lo1 - lo0, md1 - md0
}

// The background work of partition Readers sharing an engine (metadata
// refreshes while partitions read from followers, the leaders' high
// watermarks for the lag check) runs once per share: 50 idle Readers send
// the brokers as many ListOffsets and Metadata requests as one does.
func TestReaderShareBackgroundRequestsDoNotGrowWithReaders(t *testing.T) {
	old, oldQuiet := readerPinnedMetadataInterval, readerQuietSampling
	t.Cleanup(func() { readerPinnedMetadataInterval, readerQuietSampling = old, oldQuiet })
	readerPinnedMetadataInterval = 200 * time.Millisecond
	// Idle leaders keep being sampled at the base pace (no quiet pace),
	// so that the window has samples to count.
	readerQuietSampling = 0

	const window = 2 * time.Second
	lo1, md1 := idleFollowerRequests(t, 1, window)
	lo50, md50 := idleFollowerRequests(t, 50, window)
	t.Logf("in %v idle: 1 Reader: %d ListOffsets, %d Metadata; 50 Readers: %d ListOffsets, %d Metadata",
		window, lo1, md1, lo50, md50)
	// One leader sampled every MaxFollowerLag/8 = 250 ms, metadata every
	// 200 ms: about 8 and 10 in the window, whatever the number of Readers.
	require.Positive(t, lo1, "no high watermark sampled")
	require.Positive(t, md1, "no metadata refresh while on a follower")
	assert.LessOrEqual(t, lo50, lo1+4, fmt.Sprintf("ListOffsets grow with Readers: %d for 1, %d for 50", lo1, lo50))
	assert.LessOrEqual(t, md50, md1+4, fmt.Sprintf("Metadata grows with Readers: %d for 1, %d for 50", md1, md50))
}

// deadFollowerDials kills the rack-b follower (broker 2) of n Readers of
// one share, unnoticed by metadata, and returns the connections opened to
// it and the Metadata requests sent during window once every partition
// read from its leader again.
func deadFollowerDials(t *testing.T, n int, window time.Duration) (dials int64, metadata int) {
	t.Helper()
	c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, 3*n, 3)
	dead := c.Broker(2).Addr()
	var toDead atomic.Int64
	dialer := &Dialer{ClientID: "reader-test", Timeout: 5 * time.Second,
		DialFunc: func(ctx context.Context, network, address string) (net.Conn, error) {
			if address == dead {
				toDead.Add(1)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		}}
	readers := followerReaders(t, c, n, dialer)
	onBroker(t, readers, 2)
	c.Broker(2).StopUnnoticed()
	onBroker(t, readers, 1)
	d0 := toDead.Load()
	_, md0 := brokerRequests(c)
	<-time.After(window) // the measurement window, not a synchronization
	_, md1 := brokerRequests(c)
	return toDead.Load() - d0, md1 - md0
}

// A dead broker's cooldown waits for a probe: the Readers of a share
// probe it once (one cooldown cache per share), and re-read metadata
// while it cools down once, not once per Reader.
func TestReaderShareProbesDeadBrokerOnce(t *testing.T) {
	const window = 4 * time.Second // the first cooldown (2 s), then a probe a second
	dials1, md1 := deadFollowerDials(t, 1, window)
	dials20, md20 := deadFollowerDials(t, 20, window)
	t.Logf("in %v with broker 2 dead: 1 Reader: %d dials to it, %d Metadata; 20 Readers: %d dials, %d Metadata",
		window, dials1, md1, dials20, md20)
	require.Positive(t, dials1, "the dead broker was never probed")
	assert.LessOrEqual(t, dials20, dials1+2, "dials to the dead broker grow with Readers")
	assert.LessOrEqual(t, md20, md1+3, "Metadata grows with Readers")
}
