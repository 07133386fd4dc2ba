package faults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/bench/wire"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The Conn user of the matrix follows the replica the leader names: on a
// cluster whose leaders pick a replica in the client's rack, every
// partition ends up read from the rack-b broker, every record once, in
// order, with no error, also once its first deadlines have passed.
func TestConnConsumerFollowsThePreferredReplica(t *testing.T) {
	defer func(d time.Duration) { connReadTimeout = d }(connReadTimeout)
	connReadTimeout = 300 * time.Millisecond
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true})
	cl.CreateTopic("t", Partitions, 3)
	for p := 0; p < Partitions; p++ {
		for seq := int64(0); seq < 20; seq++ {
			cl.Append("t", int32(p), protocol.Record{Value: makeValue(p, seq)})
		}
	}
	rec := newRecord()
	c, err := startConn(consumerConfig{brokers: cl.Addrs(), topic: "t", rack: "b", wire: wire.New(), rec: rec, logs: &logCount{}})
	require.NoError(t, err)
	defer c.close()

	readAll := func(last int64) func() bool {
		return func() bool {
			routes := c.routes()
			if len(routes) != Partitions {
				return false
			}
			for _, b := range routes {
				if b != 2 {
					return false
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for p := 0; p < Partitions; p++ {
				if rec.maxSeq[p] != last {
					return false
				}
			}
			return true
		}
	}
	require.Eventually(t, readAll(19), 20*time.Second, 10*time.Millisecond, "every partition read whole from broker 2")
	// Past the deadlines of the first requests, as a long-running user is.
	time.Sleep(3 * connReadTimeout)
	for p := 0; p < Partitions; p++ {
		cl.Append("t", int32(p), protocol.Record{Value: makeValue(p, 20)})
	}
	require.Eventually(t, readAll(20), 20*time.Second, 10*time.Millisecond, "the records appended later")
	rec.mu.Lock()
	assert.Zero(t, rec.dup)
	assert.Zero(t, rec.ooo)
	assert.Zero(t, rec.foreign)
	rec.mu.Unlock()
	n, _ := rec.appErrors()
	assert.Zero(t, n, "no error on a healthy cluster")
	require.NoError(t, c.close())
}
