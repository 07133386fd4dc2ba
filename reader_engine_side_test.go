package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A Reader started while another Reader sharing its engine long-polls the
// same broker for MaxWait (10 s) reads its first record at once, on the
// loop's second connection, not after the poll.
func TestReaderStartsDuringSharedLongPoll(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	longPoll(c.Broker(1))
	rtAppend(c, 0, 0, 3)
	cfg := func(p int) func(*ReaderConfig) {
		return func(rc *ReaderConfig) { rc.Partition, rc.MaxWait = p, 10*time.Second }
	}
	idle := rtReader(t, c, cfg(1))
	go func() { _, _ = idle.FetchMessage(rtCtx(t)) }()
	require.Eventually(t, func() bool {
		for _, rec := range c.Broker(1).Received(protocol.Fetch) {
			if rec.Request.(*protocol.FetchRequest).MaxWaitMs == 10000 {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no 10 s long poll of the idle Reader")

	late := rtReader(t, c, cfg(0))
	require.Same(t, idle.engine, late.engine, "the two Readers share an engine")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	m, err := late.FetchMessage(ctx)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, int64(0), m.Offset)
	t.Logf("the late Reader's first record after %v (the idle poll: 10 s)", took.Round(time.Millisecond))
	assert.Equal(t, 2, late.engine.Conns(), "the loop's main and side connections")
}
