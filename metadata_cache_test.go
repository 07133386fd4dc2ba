package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl/plain"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// mcJoined returns how many callers wait for the Metadata request for
// topics in flight in mc (-1: none in flight).
func mcJoined(mc *metadata.Cache, topics ...string) int {
	return mc.Joined(metadata.Ask{Topics: topics}) // no SASL
}

func testBrokers() []protocol.MetadataResponseBroker {
	return []protocol.MetadataResponseBroker{
		{NodeID: 1, Host: "h1", Port: 1}, {NodeID: 2, Host: "h2", Port: 2}, {NodeID: 3, Host: "h3", Port: 3},
	}
}

// TestMetadataCacheOneRequestForAllUsers: a Reader's cluster, a Writer's
// Transport and a Client of the same brokers asking for the same topic at
// once share Metadata requests: the Readers and Writers join the one in
// flight; the Clients, which must see what they changed before the call,
// wait for it and all share the next one. Two requests for ten callers.
func TestMetadataCacheOneRequestForAllUsers(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	c.CreateTopic("mc", 2, 1)
	b := c.Broker(1)
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var n atomic.Int32
	b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		i := int(n.Add(1)) - 1
		if i < len(gates) {
			return b.Default(req, hdr), fakebroker.Action{Wait: gates[i]}
		}
		return b.Default(req, hdr), fakebroker.Action{}
	})

	reader := newCluster(nil, c.Addrs())
	defer reader.close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	tc := tr.acquire(TCP(c.Addrs()...))
	defer tr.release(tc)
	client := &Client{Addr: TCP(c.Addrs()...), Transport: tr}
	require.Same(t, reader.meta, tc.cl.meta, "one cache for the same brokers")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const perUser = 3
	errs := make(chan error, 3*perUser+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); errs <- reader.refresh(ctx, "mc") }()
	require.Eventually(t, func() bool { return mcJoined(reader.meta, "mc") == 0 },
		5*time.Second, time.Millisecond, "the first request is in flight")
	for i := 0; i < perUser; i++ {
		wg.Add(3)
		go func() { defer wg.Done(); errs <- reader.refresh(ctx, "mc") }()
		go func() { defer wg.Done(); errs <- tc.refreshSince(ctx, "mc", time.Now(), false) }()
		go func() {
			defer wg.Done()
			md, err := client.Metadata(ctx, &MetadataRequest{Topics: []string{"mc"}})
			if err == nil && (len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2) {
				err = errors.New("the Client's answer lacks the topic's partitions")
			}
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return mcJoined(reader.meta, "mc") == 3*perUser },
		5*time.Second, time.Millisecond, "every caller waits for the request in flight")
	close(gates[0])
	require.Eventually(t, func() bool { return mcJoined(reader.meta, "mc") == perUser-1 },
		5*time.Second, time.Millisecond, "the Clients share the next request")
	close(gates[1])
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 2, b.Requests(protocol.Metadata), "Metadata requests for %d callers", 3*perUser+1)
	count, ok := tc.cl.partitionCount("mc")
	assert.True(t, ok)
	assert.Equal(t, 2, count)
}

// TestMetadataCacheEpochMonotonicAcrossWriterAndReader: what a Writer
// learned (leader epoch 5) is not undone by an older answer a Reader of the
// same brokers gets later from a lagging broker, and the Reader sees the
// Writer's leader without reading metadata first.
func TestMetadataCacheEpochMonotonicAcrossWriterAndReader(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	c.CreateTopic("mono", 1, 3)
	c.SetPartition("mono", 0, fakebroker.PartitionState{Leader: 2, LeaderEpoch: 5, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tr := &Transport{}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: TCP(c.Addrs()...), Topic: "mono", Transport: tr}
	defer w.Close()
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("v")}))

	r := NewReader(ReaderConfig{Brokers: c.Addrs(), Topic: "mono", Partition: 0})
	defer r.Close()
	p, ok := r.cluster.partition("mono", 0)
	require.True(t, ok, "the Reader shares the Writer's cache")
	assert.Equal(t, 5, p.LeaderEpoch)

	// Every broker now answers as one that missed the last two elections.
	for _, b := range c.Brokers() {
		b := b
		b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b.Default(req, hdr).(*protocol.MetadataResponse)
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].LeaderID = 1
					resp.Topics[i].Partitions[j].LeaderEpoch = 3
				}
			}
			return resp, fakebroker.Action{}
		})
	}
	require.NoError(t, r.refreshMetadata(ctx, "mono"))
	p, _ = r.cluster.partition("mono", 0)
	assert.Equal(t, 5, p.LeaderEpoch, "epoch after a stale answer to the Reader")
	assert.Equal(t, 2, p.Leader.ID)

	tc := tr.acquire(w.Addr)
	defer tr.release(tc)
	require.Same(t, r.cluster.meta, tc.cl.meta)
	leader, err := tc.leader("mono", 0)
	require.NoError(t, err)
	assert.Equal(t, 2, leader.ID, "the Writer's leader after the Reader's stale answer")
}

// TestMetadataCacheEveryBrokerErrorKept: a refresh no broker answers
// returns every broker's failure, whoever asks (Reader's cluster, Writer's
// Transport, Client).
func TestMetadataCacheEveryBrokerErrorKept(t *testing.T) {
	var addrs []string
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs = append(addrs, ln.Addr().String())
		ln.Close() // nothing listens: connection refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check := func(who string, err error) {
		t.Helper()
		require.Error(t, err, who)
		var be *brokersError
		require.True(t, errors.As(err, &be), "%s: %v", who, err)
		assert.Len(t, be.errs, 2, who)
		for _, a := range addrs {
			assert.Contains(t, err.Error(), a, who)
		}
	}

	cl := newCluster(&Dialer{Timeout: 2 * time.Second}, addrs)
	defer cl.close()
	check("cluster", cl.refresh(ctx, "t"))

	tr := &Transport{DialTimeout: 2 * time.Second}
	defer tr.CloseIdleConnections()
	tc := tr.acquire(TCP(addrs...))
	defer tr.release(tc)
	check("transport", tc.refreshSince(ctx, "t", time.Now(), false))

	_, err := (&Client{Addr: TCP(addrs...), Transport: tr}).Metadata(ctx, &MetadataRequest{Topics: []string{"t"}})
	check("client", err)
}

// TestMetadataCacheRequestsNotSharedAcrossUsers: brokers may hide topics
// from some users, so a request in flight for one SASL user is not
// answered to another; both answers still go into the one cache.
func TestMetadataCacheRequestsNotSharedAcrossUsers(t *testing.T) {
	alice := credentials(&Dialer{SASLMechanism: plain.Mechanism{Username: "alice", Password: "a"}})
	bob := credentials(&Dialer{SASLMechanism: plain.Mechanism{Username: "bob", Password: "b"}})
	require.NotEqual(t, alice, bob)
	require.Equal(t, alice, credentials(&Dialer{SASLMechanism: plain.Mechanism{Username: "alice", Password: "a"}}))

	mc := metadata.New()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer := func(epoch int32) *protocol.MetadataResponse {
		return &protocol.MetadataResponse{Brokers: testBrokers(), Topics: []protocol.MetadataResponseTopic{{
			Name: "t", TopicID: [16]byte{15: 1},
			Partitions: []protocol.MetadataResponsePartition{{LeaderID: 1, LeaderEpoch: epoch, ReplicaNodes: []int32{1, 2, 3}, IsrNodes: []int32{1}}},
		}}}
	}
	gate := make(chan struct{})
	var sent atomic.Int32
	aliceDone := make(chan error, 1)
	go func() {
		_, err := mc.Shared(ctx, metadata.Ask{Who: alice, Topics: []string{"t"}}, func(context.Context) (*protocol.MetadataResponse, error) {
			sent.Add(1)
			<-gate
			return answer(4), nil
		})
		aliceDone <- err
	}()
	require.Eventually(t, func() bool { return sent.Load() == 1 }, 5*time.Second, time.Millisecond)
	_, err := mc.Shared(ctx, metadata.Ask{Who: bob, Topics: []string{"t"}}, func(context.Context) (*protocol.MetadataResponse, error) {
		sent.Add(1)
		return answer(7), nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(2), sent.Load(), "bob sent his own request while alice's was in flight")
	close(gate)
	require.NoError(t, <-aliceDone)
	p, ok := mc.Partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 7, p.LeaderEpoch, "alice's older answer did not undo bob's")
}

// TestMetadataCacheRequestsNotSharedAcrossTLS: a client with other TLS
// settings (none, another CA, other certificates) may fail where this one
// would not, and must not get that error (seen in CI: a Writer with an
// untrusted CA got "a TLS listener, for a client without TLS" from the
// request of another Writer without TLS, at the same addresses).
func TestMetadataCacheRequestsNotSharedAcrossTLS(t *testing.T) {
	tlsA, tlsB := &tls.Config{}, &tls.Config{}
	plainWho := credentials(&Dialer{})
	whoA := credentials(&Dialer{TLS: tlsA})
	require.NotEqual(t, plainWho, whoA)
	require.NotEqual(t, whoA, credentials(&Dialer{TLS: tlsB}), "another TLS configuration")
	require.Equal(t, whoA, credentials(&Dialer{TLS: tlsA}), "the same one")
	require.Equal(t, (&transportCluster{rt: &Transport{TLS: tlsA}}).credentials(), whoA, "a Transport's TLS counts too")

	mc := metadata.New()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gate := make(chan struct{})
	var sent atomic.Int32
	plainDone := make(chan error, 1)
	go func() {
		_, err := mc.Shared(ctx, metadata.Ask{Who: plainWho, Topics: []string{"t"}}, func(context.Context) (*protocol.MetadataResponse, error) {
			sent.Add(1)
			<-gate
			return nil, errors.New("a TLS listener, for a client without TLS")
		})
		plainDone <- err
	}()
	require.Eventually(t, func() bool { return sent.Load() == 1 }, 5*time.Second, time.Millisecond)
	tlsErr := errors.New("x509: certificate signed by unknown authority")
	done := make(chan error, 1)
	go func() {
		_, err := mc.Shared(ctx, metadata.Ask{Who: whoA, Topics: []string{"t"}}, func(context.Context) (*protocol.MetadataResponse, error) {
			sent.Add(1)
			return nil, tlsErr
		})
		done <- err
	}()
	require.ErrorIs(t, <-done, tlsErr, "the TLS client's own error, not the plaintext one's")
	assert.Equal(t, int32(2), sent.Load())
	close(gate)
	require.Error(t, <-plainDone)
}

// TestMetadataCacheForgottenWhenUnused: the cache lives while a Reader,
// Writer or Client uses it, and is forgotten once all are closed (a later
// cluster at the same addresses starts afresh).
func TestMetadataCacheForgottenWhenUnused(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	c.CreateTopic("gone", 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.False(t, metadata.InUse(c.Addrs()))

	r := NewReader(ReaderConfig{Brokers: c.Addrs(), Topic: "gone", Partition: 0})
	w := &Writer{Addr: TCP(c.Addrs()...), Topic: "gone", Transport: &Transport{}}
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("v")}))
	inner := &Transport{}
	defer inner.CloseIdleConnections()
	custom := &Writer{Addr: TCP(c.Addrs()...), Topic: "gone", Transport: roundTripperFunc(inner.RoundTrip)}
	require.NoError(t, custom.WriteMessages(ctx, Message{Value: []byte("w")}))
	_, err := (&Client{Addr: TCP(c.Addrs()...)}).Metadata(ctx, &MetadataRequest{Topics: []string{"gone"}})
	require.NoError(t, err)
	assert.True(t, metadata.InUse(c.Addrs()), "in use")

	require.NoError(t, r.Close())
	require.NoError(t, w.Close())
	assert.True(t, metadata.InUse(c.Addrs()), "the custom RoundTripper's Writer still uses it")
	require.NoError(t, custom.Close())
	assert.False(t, metadata.InUse(c.Addrs()), "every user closed")
}

type roundTripperFunc func(context.Context, net.Addr, protocol.Request) (protocol.Response, error)

func (f roundTripperFunc) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	return f(ctx, addr, req)
}

// The Reader and the Writer read a partition's metadata in the public
// types between fetches and per batch: the conversion must not copy.
func TestClusterPartitionViewDoesNotAllocate(t *testing.T) {
	cl := &cluster{meta: metadata.New()}
	cl.meta.Merge(testBrokers(), []protocol.MetadataResponseTopic{{Name: "t", Partitions: []protocol.MetadataResponsePartition{
		{LeaderID: 2, LeaderEpoch: 4, ReplicaNodes: []int32{1, 2, 3}, IsrNodes: []int32{2, 3}, ErrorCode: int16(LeaderNotAvailable)},
	}}})
	p, ok := cl.partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, Partition{
		Topic: "t", ID: 0, LeaderEpoch: 4,
		Leader:   Broker{Host: "h2", Port: 2, ID: 2},
		Replicas: []Broker{{Host: "h1", Port: 1, ID: 1}, {Host: "h2", Port: 2, ID: 2}, {Host: "h3", Port: 3, ID: 3}},
		Isr:      []Broker{{Host: "h2", Port: 2, ID: 2}, {Host: "h3", Port: 3, ID: 3}},
		Error:    LeaderNotAvailable,
	}, p)
	assert.Zero(t, testing.AllocsPerRun(100, func() { cl.partition("t", 0) }))
}
