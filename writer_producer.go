package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/internal/producer"
	"github.com/rackfetch/kafka-go/protocol"
)

// The adapter between the Writer and its runtime (internal/producer): the
// runtime reaches the cluster through writerCluster and the messages
// through messageCodec.

// newWriterCore starts the runtime of w, on the cluster state of its
// Transport, which it returns too.
func newWriterCore(w *Writer) (*producer.Core[Message], *transportCluster, error) {
	rt := w.Transport
	if rt == nil {
		rt = DefaultTransport
	}
	wc := &writerCluster{}
	if t, ok := rt.(*Transport); ok {
		if t == nil {
			return nil, nil, errors.New("kafka.(*Writer): Transport is a nil *Transport")
		}
		wc.tc = t.acquire(w.Addr)
		wc.release = func() { t.release(wc.tc) }
	} else {
		if rt == nil {
			return nil, nil, errors.New("kafka.(*Writer): no Transport (DefaultTransport is nil)")
		}
		wc.tc = newTransportCluster(nil, w.Addr, rt)
		wc.release = wc.tc.cl.close // gives back the metadata cache
	}
	cfg := producer.Config[Message]{
		Cluster: wc,
		Codec:   messageCodec{},
		Stats:   w.stats(),
		Errors: producer.Errors[Message]{
			Code:      func(code int16) error { return Error(code) },
			Produce:   makeError,
			Retriable: retriableWriteError,
			Temporary: func(err error) bool {
				var kerr Error
				return errors.As(err, &kerr) && kerr.Temporary()
			},
			TooLarge: func(m *Message) error { return MessageTooLargeError{Message: *m} },
		},
		Settings: writerSettings{w},
	}
	return producer.New(cfg), wc.tc, nil
}

// writerSettings gives the runtime the fields of the Writer, read at each
// use as before the runtime moved.
type writerSettings struct{ w *Writer }

func (s writerSettings) Async() bool                        { return s.w.Async }
func (s writerSettings) RequiredAcks() int16                { return int16(s.w.RequiredAcks) }
func (s writerSettings) Compression() Compression           { return s.w.Compression }
func (s writerSettings) MaxAttempts() int                   { return s.w.maxAttempts() }
func (s writerSettings) DeliveryTimeout() time.Duration     { return s.w.deliveryTimeout() }
func (s writerSettings) WriteBackoffMin() time.Duration     { return s.w.writeBackoffMin() }
func (s writerSettings) WriteBackoffMax() time.Duration     { return s.w.writeBackoffMax() }
func (s writerSettings) BatchSize() int                     { return s.w.batchSize() }
func (s writerSettings) BatchBytes() int64                  { return s.w.batchBytes() }
func (s writerSettings) BatchTimeout() time.Duration        { return s.w.batchTimeout() }
func (s writerSettings) ReadTimeout() time.Duration         { return s.w.readTimeout() }
func (s writerSettings) WriteTimeout() time.Duration        { return s.w.writeTimeout() }
func (s writerSettings) Completion() func([]Message, error) { return s.w.Completion }
func (s writerSettings) Logger() producer.Logger            { return s.w.Logger }
func (s writerSettings) ErrorLogger() producer.Logger       { return s.w.ErrorLogger }

// retriableWriteError reports whether a failed produce may succeed later:
// temporary Kafka errors, and network errors (the broker may be restarting,
// or its leadership moving).
func retriableWriteError(err error) bool {
	if permanentFailure(err) {
		return false // credentials, TLS, an address that is no broker
	}
	var kerr Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var uv *protocol.UnsupportedVersionError
	switch {
	case errors.As(err, &uv), errors.Is(err, context.Canceled), errors.Is(err, errClusterClosed), errors.Is(err, producer.ErrEncode):
		return false
	}
	return true
}

// messageCodec is how the runtime reads and completes a Message.
type messageCodec struct{}

func (messageCodec) Size(m *Message) int64 { return messageSize(m) }

func (messageCodec) Place(m *Message, tp producer.TopicPartition, stamp time.Time) {
	m.Topic, m.Partition = tp.Topic, tp.Partition
	if m.Time.IsZero() {
		m.Time = stamp
	}
}

func (messageCodec) Record(m *Message) protocol.Record {
	return protocol.Record{Timestamp: m.Time.UnixMilli(), Key: m.Key, Value: m.Value, Headers: m.Headers}
}

func (messageCodec) Written(m *Message, offset, appendTime int64) {
	m.Offset = offset
	if appendTime >= 0 {
		m.Time = time.UnixMilli(appendTime)
	}
}

// writerCluster is the cluster state of a Writer's Transport, as its
// runtime sees it.
type writerCluster struct {
	tc      *transportCluster
	release func()
}

func (wc *writerCluster) Context() context.Context { return wc.tc.context() }

func (wc *writerCluster) Leader(topic string, partition int) (producer.Broker, error) {
	b, err := wc.tc.leader(topic, partition)
	return producer.Broker(b), err
}

func (wc *writerCluster) LeaderEpoch(topic string, partition int) (id, epoch int, ok bool) {
	p, ok := wc.tc.cl.partition(topic, partition)
	return p.Leader.ID, p.LeaderEpoch, ok
}

func (wc *writerCluster) Replicas(dst []int, topic string, partition int) []int {
	p, _ := wc.tc.cl.partition(topic, partition)
	for _, r := range p.Replicas {
		dst = append(dst, r.ID)
	}
	return dst
}

func (wc *writerCluster) Broker(id int) (producer.Broker, bool) {
	b, ok := wc.tc.cl.broker(id)
	return producer.Broker(b), ok
}

func (wc *writerCluster) Brokers(dst []producer.Broker) []producer.Broker {
	wc.tc.cl.eachBroker(func(b Broker) { dst = append(dst, producer.Broker(b)) })
	return dst
}

func (wc *writerCluster) MergeMetadata(md *protocol.MetadataResponse) { wc.tc.cl.mergeAnswer(md) }

func (wc *writerCluster) RefreshSince(ctx context.Context, topic string, since time.Time) error {
	return wc.tc.refreshSince(ctx, topic, since, false)
}

func (wc *writerCluster) InitProducerID(ctx context.Context) (*protocol.InitProducerIdResponse, error) {
	return wc.tc.initProducerID(ctx)
}

func (wc *writerCluster) Dials() bool { return wc.tc.rt == nil }

func (wc *writerCluster) Dial(ctx context.Context, b producer.Broker) (producer.Conn, error) {
	c, err := wc.tc.dialProduce(ctx, Broker(b))
	if err != nil {
		return nil, err
	}
	return writerConn{c}, nil
}

func (wc *writerCluster) IdleTimeout() time.Duration { return wc.tc.t.idleTimeout() }

func (wc *writerCluster) RoundTrip(ctx context.Context, b producer.Broker, req protocol.Request) (protocol.Response, error) {
	return wc.tc.rt.RoundTrip(ctx, TCP(net.JoinHostPort(b.Host, strconv.Itoa(b.Port))), req)
}

func (wc *writerCluster) Release() { wc.release() }

// writerConn is a connection of the Writer's own.
type writerConn struct{ c *Conn }

func (wc writerConn) Produce(ctx context.Context, req *protocol.ProduceRequest) (protocol.Response, error) {
	return sendRequest(ctx, wc.c, req)
}

func (wc writerConn) RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, error) {
	resp, _, err := wc.c.roundTrip(ctx, req, limit)
	return resp, err
}

func (wc writerConn) Broken() bool { return wc.c.isBroken() }

func (wc writerConn) Close() error { return wc.c.Close() }
