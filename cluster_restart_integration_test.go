package kafka

// A broker restarted under a kept control connection, on the real
// cluster: the next control request meets the connection the broker
// closed, and goes once more on a fresh one to the same broker instead of
// marking a healthy broker unresponsive (cluster.attempt; the fake-broker
// twin is TestClusterControlRetriesClosedKeptConnection).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ktesting "github.com/rackfetch/kafka-go/testing"
)

func TestClusterIntegrationControlAfterBrokerRestart(t *testing.T) {
	c := ktesting.RequireRackCluster(t)
	ktesting.LockCluster(t) // a restart would disturb the other tests
	topic := itTopic(t, c, TopicConfig{NumPartitions: 3})
	ctx := itCtx(t, 3*time.Minute)

	cl := newCluster(&Dialer{Timeout: 10 * time.Second}, c.Brokers)
	t.Cleanup(cl.close)
	require.NoError(t, cl.refresh(ctx, topic)) // from a bootstrap address
	require.NoError(t, cl.refresh(ctx, topic)) // from a broker known by id, whose connection is kept
	victim := cl.controlTargets()[0]
	require.GreaterOrEqual(t, victim.id, 0, "a known broker first: %v", cl.controlTargets())
	require.True(t, cl.hasConn(victim), "a kept control connection to broker %v", victim)

	ktesting.RestartBroker(t, victim.id) // SIGKILL, then start again on the same port

	require.NoError(t, cl.refresh(ctx, topic), "metadata through the connection the restarted broker closed")
	assert.Equal(t, victim, cl.controlTargets()[0], "the restarted broker is still asked first, not marked unresponsive")
	assert.True(t, cl.hasConn(victim), "a fresh control connection to broker %v", victim)
	cl.connMu.Lock()
	_, stalled := cl.stalls.Until(victim.addr, time.Now())
	cl.connMu.Unlock()
	assert.False(t, stalled, "broker %v remembered as unresponsive", victim)
}
