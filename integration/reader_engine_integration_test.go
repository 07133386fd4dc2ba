package integration

// The Reader's fetch engine as the brokers see it, on the real cluster: the long polls of partition
// Readers started together, read from the Fetch requests their connections send. The tests that need the
// engine's own counters stay in the root package (reader_engine_integration_test.go).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
)

// reJoinSettle is how long a broker's polls end early after a partition new to it asked (the engine's
// join settle, 250 ms): a partition arriving a moment later is not held up by a long poll for the others.
const reJoinSettle = 250 * time.Millisecond

// reFetchWaits returns the MaxWaitMs of the Fetch requests spy saw, per connection in order.
func reFetchWaits(t *testing.T, spy *apiSpy) [][]int32 {
	t.Helper()
	var waits [][]int32
	for _, r := range spy.requests(apiFetch) {
		h, d, err := protocol.DecodeRequestHeader(r.frame, protocol.FlexibleFrom)
		if err != nil {
			t.Fatalf("decoding a Fetch request header: %v", err)
		}
		var req protocol.FetchRequest
		if err := req.Decode(d, h.Version); err != nil {
			t.Fatalf("decoding a Fetch v%d request: %v", h.Version, err)
		}
		for len(waits) <= r.conn {
			waits = append(waits, nil)
		}
		waits[r.conn] = append(waits[r.conn], req.MaxWaitMs)
	}
	return waits
}

// Partition Readers started together on a quiet topic, with kafka-go's
// MaxWait (10 s): each broker's first fetches end within 250 ms of the
// last new partition, so that a partition arriving a moment later is not
// held up by a long poll for the others; after that, long polls resume
// (10 s: MaxWait).
func TestReaderIntegrationShortPollsWhilePartitionsArrive(t *testing.T) {
	c := requireRackCluster(t)
	const partitions = 6
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	spy := &apiSpy{keep: map[int16]bool{apiFetch: true}}
	dialer := spy.dialer(newDialer())
	for p := 0; p < partitions; p++ {
		r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.MaxWait = p, dialer, 10*time.Second
		})
		go r.ReadMessage(ctx) // nothing to read: the Readers long-poll
	}
	var first, long []int32
	eventually(t, 20*time.Second, "long polls on every broker that was fetched from", func() bool {
		first, long = nil, nil
		for _, ws := range reFetchWaits(t, spy) {
			if len(ws) == 0 {
				continue
			}
			first = append(first, ws[0])
			for _, w := range ws {
				if w == 10000 {
					long = append(long, w)
					break
				}
			}
		}
		return len(first) > 0 && len(long) == len(first)
	})
	t.Logf("ENGINEFIGURE first fetch waits per data connection %v (ms); every one long-polls 10 s later", first)
	for _, w := range first {
		assert.LessOrEqual(t, w, int32(reJoinSettle/time.Millisecond), "a broker's first fetch, partitions still arriving")
	}
}
