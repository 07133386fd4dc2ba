package producer

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The leader watches of requests in flight together share their polls: a
// watch that finds its topics read within the last PollInterval sends
// nothing, so a stalled broker with five requests in flight costs the
// cluster one Metadata request per interval, not five.
func TestLeaderWatchesSharePolls(t *testing.T) {
	c, tc := newTestCore(t, &testSettings{batchSize: 100, batchBytes: 1 << 20})
	lw := &c.watch
	ctx := context.Background()
	targets := []Broker{testBroker}
	polls := func() int {
		tc.mu.Lock()
		defer tc.mu.Unlock()
		return tc.metadata
	}

	require.NoError(t, lw.pollLeaders(ctx, []string{"t"}, targets, time.Now().Add(-PollInterval)))
	assert.Equal(t, 1, polls())
	require.NoError(t, lw.pollLeaders(ctx, []string{"t"}, targets, time.Now().Add(-PollInterval)))
	assert.Equal(t, 1, polls(), "a second watch of the same topic within the interval")
	require.NoError(t, lw.pollLeaders(ctx, []string{"t", "u"}, targets, time.Now().Add(-PollInterval)))
	assert.Equal(t, 2, polls(), "a topic not read yet")
	require.NoError(t, lw.pollLeaders(ctx, []string{"t"}, targets, time.Now()))
	assert.Equal(t, 3, polls(), "a read older than since")
	require.NoError(t, lw.pollLeaders(ctx, []string{"t"}, targets, time.Time{}))
	assert.Equal(t, 4, polls(), "no since: always")
}
