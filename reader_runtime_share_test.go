package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// idleFollowerRequests starts n partition Readers of one share in rack b,
// each on a partition led by broker 1 and read from its rack-b follower
// (broker 2), lets them read to the end, and returns the ListOffsets and
// Metadata requests the brokers saw during window while they idled.
func idleFollowerRequests(t *testing.T, n int, window time.Duration) (listOffsets, metadata int) {
	t.Helper()
	c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, 3*n, 3)
	readers := make([]*Reader, n)
	for i := range readers {
		p := 3 * i // replicas 1, 2, 3: led by broker 1
		c.AppendRecords("t", int32(p), "x", "y")
		readers[i] = rtReader(t, c, func(cfg *ReaderConfig) {
			cfg.Partition, cfg.Rack, cfg.MaxFollowerLag = p, "b", 2*time.Second
		})
	}
	ctx := rtCtx(t)
	for _, r := range readers {
		for j := 0; j < 2; j++ {
			_, err := r.FetchMessage(ctx)
			require.NoError(t, err)
		}
	}
	require.Eventually(t, func() bool {
		for _, r := range readers {
			if rt := r.Stats().Routing; len(rt) != 1 || rt[0].Broker != 2 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every partition on its rack-b follower")
	count := func() (lo, md int) {
		for _, b := range c.Brokers() {
			lo += b.Requests(protocol.ListOffsets)
			md += b.Requests(protocol.Metadata)
		}
		return lo, md
	}
	lo0, md0 := count()
	<-time.After(window) // the measurement window, not a synchronization
	lo1, md1 := count()
	return lo1 - lo0, md1 - md0
}

// The background work of partition Readers sharing an engine (metadata
// refreshes while partitions read from followers, the leaders' high
// watermarks for the lag check) runs once per share: 50 idle Readers send
// the brokers as many ListOffsets and Metadata requests as one does.
func TestReaderShareBackgroundRequestsDoNotGrowWithReaders(t *testing.T) {
	old := readerPinnedMetadataInterval
	t.Cleanup(func() { readerPinnedMetadataInterval = old })
	readerPinnedMetadataInterval = 200 * time.Millisecond

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
