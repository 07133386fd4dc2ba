package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A group coordinator still loading (a fresh cluster creating
// __consumer_offsets) is a condition the Reader retries until it joins:
// the retries go to Logger, and ErrorLogger stays silent.
func TestReaderGroupCoordinatorLoadingLogsBelowError(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 1}, 1, 1)
	b := c.Broker(1)
	b.Script(protocol.FindCoordinator, 1, fakebroker.Step{ErrorCode: int16(GroupCoordinatorNotAvailable)})
	b.Script(protocol.FindCoordinator, 2, fakebroker.Step{ErrorCode: int16(GroupCoordinatorNotAvailable)})
	b.Script(protocol.JoinGroup, 1, fakebroker.Step{ErrorCode: int16(GroupLoadInProgress)})
	rtAppend(c, 0, 0, 1)

	info, errs := &rtLogger{}, &rtLogger{}
	r := rtGroupReader(t, c, "coordinator-loading", func(cfg *ReaderConfig) {
		cfg.Logger, cfg.ErrorLogger = info, errs
	})
	m, err := r.FetchMessage(rtCtx(t))
	require.NoError(t, err)
	require.Equal(t, "v0", string(m.Value))

	assert.Empty(t, errs.all(), "ErrorLogger lines")
	assert.NotEmpty(t, info.find("finding the coordinator"), "the coordinator lookup retried at Logger")
	assert.NotEmpty(t, info.find(GroupLoadInProgress.Error()), "the join retried at Logger")
}
