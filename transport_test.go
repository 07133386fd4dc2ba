package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func TestTCP(t *testing.T) {
	a := TCP("a:9092", "b:9093")
	if a.Network() != "tcp" || a.String() != "a:9092,b:9093" {
		t.Errorf("TCP = %s %s", a.Network(), a)
	}
	if got := splitAddr(a); len(got) != 2 || got[1] != "b:9093" {
		t.Errorf("splitAddr(TCP) = %q", got)
	}
	if got := splitAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9092}); len(got) != 1 || got[0] != "127.0.0.1:9092" {
		t.Errorf("splitAddr(TCPAddr) = %q", got)
	}
}

// RoundTrip sends any request to the broker at the address, on a kept
// connection; acks=0 produce returns no response.
func TestTransportRoundTrip(t *testing.T) {
	c := wtCluster(t, 2, 1)
	tr := &Transport{ClientID: "rt-test"}
	defer tr.CloseIdleConnections()
	ctx := wtContext(t)
	addr := TCP("127.0.0.1:1", c.Broker(2).Addr()) // the first refuses
	resp, err := tr.RoundTrip(ctx, addr, &protocol.MetadataRequest{Topics: []protocol.MetadataRequestTopic{{Name: wtTopic}}})
	if err != nil {
		t.Fatal(err)
	}
	md := resp.(*protocol.MetadataResponse)
	if len(md.Brokers) != 2 || len(md.Topics) != 1 || md.Topics[0].Name != wtTopic {
		t.Fatalf("metadata %+v", md)
	}
	bb := protocol.NewRecordBatchBuilder()
	bb.Add(protocol.Record{Value: []byte("rt")})
	records, _ := bb.AppendTo(nil)
	leader := TCP(c.Broker(1).Addr())
	for _, acks := range []int16{1, 0} {
		req := &protocol.ProduceRequest{Acks: acks, TimeoutMs: 1000, Topics: []protocol.ProduceRequestTopic{{Name: wtTopic, Partitions: []protocol.ProduceRequestPartition{{Index: 0, Records: records}}}}}
		resp, err := tr.RoundTrip(ctx, leader, req)
		if err != nil {
			t.Fatal(err)
		}
		if (resp == nil) != (acks == 0) {
			t.Errorf("acks=%d: response %v", acks, resp)
		}
	}
	// The acks=0 request is stored before the next answer is sent.
	if _, err := tr.RoundTrip(ctx, leader, &protocol.MetadataRequest{}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "rt", "rt")
	if n := c.Broker(1).Requests(protocol.ApiVersions); n != 1 {
		t.Errorf("%d connections to broker 1, want 1 kept", n)
	}
	if h := c.Broker(1).Received(protocol.Metadata)[0].Header; h.ClientID == nil || *h.ClientID != "rt-test" {
		t.Errorf("client id %v", h.ClientID)
	}
	if _, err := tr.RoundTrip(ctx, TCP("127.0.0.1:1"), &protocol.MetadataRequest{}); err == nil {
		t.Error("RoundTrip to a closed port succeeded")
	}
}

// A kept connection the broker closed (it restarted, or dropped it as
// idle) fails the next request on it: RoundTrip sends that request again on
// a fresh connection rather than return the closed connection's EOF, except
// a Produce, which the broker may have written before it went away.
func TestTransportRetriesOnClosedKeptConnection(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	ctx := wtContext(t)
	addr := TCP(b.Addr())
	md := &protocol.MetadataRequest{Topics: []protocol.MetadataRequestTopic{{Name: wtTopic}}}
	_, err := tr.RoundTrip(ctx, addr, md)
	require.NoError(t, err)

	b.Script(protocol.Metadata, b.Requests(protocol.Metadata)+1, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	resp, err := tr.RoundTrip(ctx, addr, md)
	require.NoError(t, err, "a request on a connection the broker closed")
	assert.Len(t, resp.(*protocol.MetadataResponse).Topics, 1)
	assert.Equal(t, 2, b.Requests(protocol.ApiVersions), "connections: the kept one and a fresh one")

	// A closed connection met by a Produce: the error, no second try.
	bb := protocol.NewRecordBatchBuilder()
	bb.Add(protocol.Record{Value: []byte("once")})
	records, _ := bb.AppendTo(nil)
	produce := &protocol.ProduceRequest{Acks: 1, TimeoutMs: 1000, Topics: []protocol.ProduceRequestTopic{{Name: wtTopic, Partitions: []protocol.ProduceRequestPartition{{Index: 0, Records: records}}}}}
	n := b.Requests(protocol.Produce)
	b.Script(protocol.Produce, n+1, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	_, err = tr.RoundTrip(ctx, addr, produce)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, n+1, b.Requests(protocol.Produce), "produce requests the broker got")

	// A freshly dialed connection closed at once is no kept one gone stale:
	// its error is returned, not retried.
	tr.CloseIdleConnections()
	m := b.Requests(protocol.Metadata)
	b.Script(protocol.Metadata, m+1, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	_, err = tr.RoundTrip(ctx, addr, md)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, m+1, b.Requests(protocol.Metadata))
}

// Writers of one Transport and Addr share the metadata: the second writer
// sends no metadata request of its own. Closing both forgets the state.
func TestTransportSharedByWriters(t *testing.T) {
	c := wtCluster(t, 1, 1)
	tr := &Transport{}
	ctx := wtContext(t)
	w1 := &Writer{Addr: TCP(c.Addrs()...), Topic: wtTopic, Transport: tr, RequiredAcks: RequireOne}
	w2 := &Writer{Addr: TCP(c.Addrs()...), Topic: wtTopic, Transport: tr, RequiredAcks: RequireOne}
	if err := w1.WriteMessages(ctx, Message{Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	n := c.Broker(1).Requests(protocol.Metadata)
	if err := w2.WriteMessages(ctx, Message{Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if m := c.Broker(1).Requests(protocol.Metadata); m != n {
		t.Errorf("the second writer read metadata again (%d requests, was %d)", m, n)
	}
	w1.Close()
	tr.mu.Lock()
	shared := len(tr.clusters)
	tr.mu.Unlock()
	if shared != 1 {
		t.Errorf("%d shared clusters with one writer open, want 1", shared)
	}
	w2.Close()
	tr.mu.Lock()
	shared = len(tr.clusters)
	tr.mu.Unlock()
	if shared != 0 {
		t.Errorf("%d shared clusters after both writers closed, want 0", shared)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "1", "2")
}

// Metadata older than MetadataTTL is read again in the background; the
// writes go on with the cached entry meanwhile.
func TestTransportMetadataTTL(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	w := wtWriter(t, c)
	w.Transport = &Transport{MetadataTTL: time.Nanosecond}
	ctx := wtContext(t)
	// Every write finds the entry stale; one refresh runs at a time, so
	// poll until each round's refresh has been sent.
	for i := 0; i < 3; i++ {
		n := b.Requests(protocol.Metadata)
		deadline := time.Now().Add(10 * time.Second)
		for b.Requests(protocol.Metadata) == n {
			if time.Now().After(deadline) {
				t.Fatal("no metadata refresh")
			}
			if err := w.WriteMessages(ctx, Message{Value: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A produce connection idle longer than IdleTimeout is dialed again.
func TestTransportIdleTimeout(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	w := wtWriter(t, c)
	w.Transport = &Transport{IdleTimeout: time.Nanosecond}
	ctx := wtContext(t)
	if err := w.WriteMessages(ctx, Message{Value: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	n := b.Requests(protocol.ApiVersions) // one per connection
	if err := w.WriteMessages(ctx, Message{Value: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if m := b.Requests(protocol.ApiVersions); m != n+1 {
		t.Errorf("%d connections after an idle period, want %d", m, n+1)
	}
}

// resolver maps every broker to 127.0.0.1 and records what it was asked.
type resolver struct {
	mu    sync.Mutex
	asked []Broker
}

func (r *resolver) LookupBrokerIPAddr(ctx context.Context, b Broker) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, b)
	if b.Host == "unknown.invalid" {
		return nil, errors.New("no such host")
	}
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

// The BrokerResolver is asked for the bootstrap address (ID -1) and for
// the brokers of the metadata (with their ids), once per connection; Dial gets resolved
// addresses.
func TestTransportResolver(t *testing.T) {
	c := wtCluster(t, 1, 1)
	r := &resolver{}
	var mu sync.Mutex
	var dialed []string
	tr := &Transport{
		Resolver: r,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, network, address)
		},
	}
	port := strconv.Itoa(int(c.Broker(1).Port()))
	w := wtWriter(t, c)
	w.Addr = TCP("kafka.example.invalid:" + port)
	w.Transport = tr
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("resolved")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.mu.Lock()
	asked := r.asked
	r.mu.Unlock()
	// Broker 1 twice: the produce connection and a control connection
	// (InitProducerId).
	if len(asked) != 3 || asked[0].Host != "kafka.example.invalid" || asked[0].ID != -1 || asked[1].ID != 1 || asked[2].ID != 1 {
		t.Errorf("resolver asked for %+v, want the bootstrap host then broker 1", asked)
	}
	for _, a := range dialed {
		if a != "127.0.0.1:"+port {
			t.Errorf("dialed %s", a)
		}
	}
	w2 := &Writer{Addr: TCP("unknown.invalid:" + port), Topic: wtTopic, Transport: &Transport{Resolver: r}}
	defer w2.Close()
	if err := w2.WriteMessages(wtContext(t), Message{}); err == nil {
		t.Error("a write through a failing resolver succeeded")
	}
}

// Transport.Context ends the requests of the writers using it: retries
// stop, and the messages fail.
func TestTransportContext(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	ctx, cancel := context.WithCancel(context.Background())
	w := wtWriter(t, c)
	w.Transport = &Transport{Context: ctx}
	w.MaxAttempts = 1000
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return wtErrorResponse(req.(*protocol.ProduceRequest), func(string, int32) int16 { return int16(NotLeaderForPartition) }), fakebroker.Action{}
	})
	n := b.Requests(protocol.Produce)
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(wtContext(t), Message{Value: []byte("never")}) }()
	<-b.Await(protocol.Produce, n+3)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, NotLeaderForPartition) && !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer kept retrying after Transport.Context ended")
	}
}
