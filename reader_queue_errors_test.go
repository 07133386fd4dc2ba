package kafka

// The errors the Reader queues for the application stay bounded while it
// does not read: a failure retried again and again is queued once until
// taken (internal/recordqueue tests the queue's bounds).

import (
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A partition the Reader may not read: every fetch answers
// TOPIC_AUTHORIZATION_FAILED, which no retry fixes and which the
// application is told of; while it does not read, one error waits.
func TestReaderCoalescesRepeatedFetchError(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 4)
	b := c.Broker(1)
	b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := b.Default(req, hdr).(*protocol.FetchResponse)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				p := &resp.Topics[i].Partitions[j]
				p.ErrorCode, p.Records = int16(TopicAuthorizationFailed), nil
			}
		}
		return resp, fakebroker.Action{}
	})
	r := rtReader(t, c, nil)
	ctx := rtCtx(t)
	_, err := r.beforeRead() // the Reader starts reading
	require.NoError(t, err)
	select {
	case <-b.Await(protocol.Fetch, 10):
	case <-ctx.Done():
		t.Fatalf("%d fetches", b.Requests(protocol.Fetch))
	}
	assert.Equal(t, 1, r.queue.QueuedErrors(), "after %d denied fetches", b.Requests(protocol.Fetch))

	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	// Taken: the next denied fetch queues it again.
	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
}
