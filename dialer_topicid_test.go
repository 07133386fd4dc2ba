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

// TestDialLeaderTopicIDFromLookup: the topic ID of a Fetch v13+ on a
// connection from DialLeader comes from the lookup's metadata answer; the
// data connection (to the leader, not the bootstrap broker) is not asked
// for metadata.
func TestDialLeaderTopicIDFromLookup(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic(ctTopic, 1, 2) // partition 0 led by broker 1
	c.AppendRecords(ctTopic, 0, "a", "b")
	leader, boot := c.Broker(1), c.Broker(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	conn, err := (&Dialer{}).DialLeader(ctx, "tcp", boot.Addr(), ctTopic, 0)
	require.NoError(t, err)
	msgs, readErr, _, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	assert.Len(t, msgs, 2, "read error %v", readErr)

	fetches := leader.Received(protocol.Fetch)
	require.Len(t, fetches, 1)
	require.GreaterOrEqual(t, fetches[0].Header.Version, int16(13), "the fake speaks Fetch v13+")
	assert.Equal(t, c.TopicID(ctTopic), fetches[0].Request.(*protocol.FetchRequest).Topics[0].TopicID)
	assert.Equal(t, 0, leader.Requests(protocol.Metadata), "Metadata requests on the data connection")
	assert.Equal(t, 1, boot.Requests(protocol.Metadata))
}
