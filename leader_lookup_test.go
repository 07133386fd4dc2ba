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

// hideBroker makes every broker of fc leave broker id out of the broker
// list of its metadata answers, while partitions still name it leader.
func hideBroker(fc *fakebroker.Cluster, id int32) {
	for _, b := range fc.Brokers() {
		b := b
		b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b.Default(req, hdr).(*protocol.MetadataResponse)
			kept := resp.Brokers[:0]
			for _, br := range resp.Brokers {
				if br.NodeID != id {
					kept = append(kept, br)
				}
			}
			resp.Brokers = kept
			return resp, fakebroker.Action{}
		})
	}
}

// missingLeaderCluster is a 3-broker fake cluster with topic "t" whose
// partition 1 is led by broker 2, which its metadata does not list.
func missingLeaderCluster(t *testing.T) (*fakebroker.Cluster, context.Context) {
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	fc.CreateTopic("t", 3, 3)
	hideBroker(fc, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return fc, ctx
}

const missingLeaderText = "looking up the leader of t/1: broker 2 is not among the brokers the metadata lists"

// TestMissingLeaderConn: dialing the leader of a partition whose leader
// the metadata does not list failed with "dialing :0: connection
// refused"; the error now names the topic, partition and broker.
func TestMissingLeaderConn(t *testing.T) {
	fc, ctx := missingLeaderCluster(t)
	_, err := (&Dialer{}).DialLeader(ctx, "tcp", fc.Broker(1).Addr(), "t", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missingLeaderText)
	assert.ErrorIs(t, err, LeaderNotAvailable)
}

// TestMissingLeaderCluster: the lookup the Reader's and the Client's
// control requests go through.
func TestMissingLeaderCluster(t *testing.T) {
	fc, ctx := missingLeaderCluster(t)
	cl := newCluster(&Dialer{Timeout: 10 * time.Second}, fc.Addrs())
	t.Cleanup(cl.close)
	require.NoError(t, cl.refresh(ctx, "t"))
	_, err := cl.leader(ctx, "t", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missingLeaderText)
	assert.ErrorIs(t, err, LeaderNotAvailable)
	p, err := cl.leader(ctx, "t", 0)
	require.NoError(t, err, "a partition whose leader is listed")
	assert.Equal(t, 1, p.Leader.ID)
}

// TestMissingLeaderClientProduce: the Client looks the leader up the same
// way.
func TestMissingLeaderClientProduce(t *testing.T) {
	fc, ctx := missingLeaderCluster(t)
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := &Client{Addr: TCP(fc.Addrs()...), Transport: tr}
	_, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 1, RequiredAcks: RequireAll,
		Records: NewRecordReader(Record{Value: NewBytes([]byte("v"))})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), missingLeaderText)
	assert.ErrorIs(t, err, LeaderNotAvailable)
}

// TestMissingLeaderWriter: the Writer's Transport looks the leader up the
// same way, and its error reaches the caller.
func TestMissingLeaderWriter(t *testing.T) {
	fc, ctx := missingLeaderCluster(t)
	// A leader missing from the metadata is waited for (an election may be
	// under way) within DeliveryTimeout; past it the message fails with
	// the error naming the partition and the broker.
	w := &Writer{Addr: TCP(fc.Addrs()...), Topic: "t", MaxAttempts: 1, BatchSize: 1, DeliveryTimeout: 100 * time.Millisecond,
		Balancer: BalancerFunc(func(Message, ...int) int { return 1 })}
	t.Cleanup(func() { w.Close() })
	err := w.WriteMessages(ctx, Message{Value: []byte("v")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), missingLeaderText)
	assert.ErrorIs(t, err, LeaderNotAvailable)
}
