package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientProduceFake starts a fake cluster of n brokers with topic "t" (3
// partitions, partition p led by broker p+1) and a Client for it.
func clientProduceFake(t *testing.T, n int) (*fakebroker.Cluster, *Client) {
	t.Helper()
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: n})
	cl.CreateTopic("t", 3, n)
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return cl, &Client{Addr: TCP(cl.Addrs()...), Transport: tr}
}

func clientProduceCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientProduceRequests counts the requests of kind key each broker got.
func clientProduceRequests(cl *fakebroker.Cluster, key protocol.ApiKey) []int {
	var counts []int
	for _, b := range cl.Brokers() {
		counts = append(counts, b.Requests(key))
	}
	return counts
}

func TestClientProduceToLeaderAndFetchBack(t *testing.T) {
	cl, c := clientProduceFake(t, 3)
	ctx := clientProduceCtx(t)
	t0 := time.UnixMilli(1_700_000_000_123)
	for _, codec := range []Compression{0, Gzip, Snappy, Lz4, Zstd} {
		base := int64(-1)
		if recs := cl.Records("t", 1); len(recs) > 0 {
			base = recs[len(recs)-1].Offset
		}
		res, err := c.Produce(ctx, &ProduceRequest{
			Topic:        "t",
			Partition:    1,
			RequiredAcks: RequireAll,
			Compression:  codec,
			Records: NewRecordReader(
				Record{Time: t0, Key: NewBytes([]byte("k1")), Value: NewBytes([]byte("v1")), Headers: []Header{{Key: "h", Value: []byte("x")}, {Key: "null"}}},
				Record{Time: t0.Add(time.Second), Value: NewBytes([]byte{})},
				Record{Time: t0.Add(2 * time.Second), Key: NewBytes(bytes.Repeat([]byte("k"), 300)), Value: NewBytes(bytes.Repeat([]byte(codec.String()), 1000))},
			),
		})
		if err != nil || res.Error != nil {
			t.Fatalf("%v: Produce = %+v, %v", codec, res, err)
		}
		if res.BaseOffset != base+1 || !res.LogAppendTime.IsZero() || res.RecordErrors != nil {
			t.Errorf("%v: response %+v; want base offset %d", codec, res, base+1)
		}

		f, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Partition: 1, Offset: res.BaseOffset, MaxBytes: 1 << 20})
		if err != nil || f.Error != nil {
			t.Fatalf("%v: Fetch = %+v, %v", codec, f, err)
		}
		got := clientFetchReadAll(t, f.Records)
		want := []clientFetchRecord{
			{res.BaseOffset, t0, "k1", "v1", []Header{{Key: "h", Value: []byte("x")}, {Key: "null"}}},
			{res.BaseOffset + 1, t0.Add(time.Second), "<nil>", "", nil},
			{res.BaseOffset + 2, t0.Add(2 * time.Second), strings.Repeat("k", 300), strings.Repeat(codec.String(), 1000), nil},
		}
		clientFetchCompare(t, codec.String(), got, want)
	}
	if got := clientProduceRequests(cl, protocol.Produce); got[0] != 0 || got[1] != 5 || got[2] != 0 {
		t.Errorf("Produce requests per broker = %v; want all 5 at the leader, broker 2", got)
	}
	if got := clientProduceRequests(cl, protocol.Fetch); got[0] != 0 || got[1] != 5 || got[2] != 0 {
		t.Errorf("Fetch requests per broker = %v; want all 5 at the leader, broker 2", got)
	}
}

func TestClientProduceRequestFields(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	before := time.Now().UnixMilli()
	if _, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 0, RequiredAcks: RequireOne, Records: NewRecordReader(Record{Value: NewBytes([]byte("a"))})}); err != nil {
		t.Fatal(err)
	}
	// The broker's time limit is half the Client's Timeout, 500ms without.
	c.Timeout = 4 * time.Second
	if _, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 0, RequiredAcks: RequireAll, TransactionalID: "tx", Records: NewRecordReader(Record{Value: NewBytes([]byte("b"))})}); err != nil {
		t.Fatal(err)
	}
	rs := cl.Broker(1).Received(protocol.Produce)
	if len(rs) != 2 {
		t.Fatalf("%d Produce requests; want 2", len(rs))
	}
	r0, r1 := rs[0].Request.(*protocol.ProduceRequest), rs[1].Request.(*protocol.ProduceRequest)
	if r0.TimeoutMs != 500 || r0.Acks != 1 || r0.TransactionalID != nil {
		t.Errorf("first request: timeout %d, acks %d, transactional id %v; want 500, 1, nil", r0.TimeoutMs, r0.Acks, r0.TransactionalID)
	}
	if r1.TimeoutMs != 2000 || r1.Acks != -1 || deref(r1.TransactionalID) != "tx" {
		t.Errorf("second request: timeout %d, acks %d, transactional id %q; want 2000, -1, tx", r1.TimeoutMs, r1.Acks, deref(r1.TransactionalID))
	}
	if v := rs[0].Header.Version; v > 10 {
		t.Errorf("Produce sent at v%d; want at most v10", v)
	}
	// A zero Time is sent as the current time.
	recs := cl.Records("t", 0)
	if len(recs) != 2 || recs[0].Timestamp < before || recs[0].Timestamp > time.Now().UnixMilli() {
		t.Errorf("records %+v; want 2, the first stamped now", recs)
	}
}

func TestClientProduceAcksNone(t *testing.T) {
	cl, c := clientProduceFake(t, 3)
	ctx := clientProduceCtx(t)
	res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 2, RequiredAcks: RequireNone, Records: NewRecordReader(Record{Value: NewBytes([]byte("fire"))})})
	if res != nil || err != nil {
		t.Fatalf("Produce acks=0 = %+v, %v; want nil, nil", res, err)
	}
	select {
	case <-cl.Broker(3).Await(protocol.Produce, 1):
	case <-ctx.Done():
		t.Fatal("the leader never got the Produce request")
	}
	// The connection is still in step: a later request is answered.
	res, err = c.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 2, RequiredAcks: RequireOne, Records: NewRecordReader(Record{Value: NewBytes([]byte("acked"))})})
	if err != nil || res.Error != nil || res.BaseOffset != 1 {
		t.Fatalf("Produce after acks=0 = %+v, %v; want base offset 1", res, err)
	}
	if recs := cl.Records("t", 2); len(recs) != 2 || string(recs[0].Value) != "fire" {
		t.Errorf("records %+v; want fire then acked", recs)
	}
}

func TestClientProduceNoRecords(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	for name, rr := range map[string]RecordReader{"nil": nil, "empty": NewRecordReader()} {
		res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireNone, Records: rr})
		if err != nil || !clientProduceEmpty(res) {
			t.Errorf("%s: Produce = %+v, %v; want an empty response", name, res, err)
		}
	}
	res, err := c.RawProduce(ctx, &RawProduceRequest{Topic: "t"})
	if err != nil || !clientProduceEmpty(res) {
		t.Errorf("RawProduce without records = %+v, %v; want an empty response", res, err)
	}
	if n := cl.Broker(1).Requests(protocol.Produce); n != 0 {
		t.Errorf("%d Produce requests sent; want none", n)
	}
	if _, err := c.Produce(ctx, nil); err == nil {
		t.Error("Produce(nil) succeeded")
	}
	if _, err := c.RawProduce(ctx, nil); err == nil {
		t.Error("RawProduce(nil) succeeded")
	}
}

func TestClientProduceUnknownTopicOrPartition(t *testing.T) {
	_, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	for _, tc := range []struct {
		topic     string
		partition int
	}{{"t", 3}, {"t", -1}, {"nope", 0}} {
		res, err := c.Produce(ctx, &ProduceRequest{Topic: tc.topic, Partition: tc.partition, RequiredAcks: RequireAll, Records: NewRecordReader(Record{Value: NewBytes([]byte("x"))})})
		if res != nil || !errors.Is(err, UnknownTopicOrPartition) || !strings.Contains(err.Error(), "Produce") {
			t.Errorf("Produce to %s/%d = %+v, %v; want an error matching UnknownTopicOrPartition", tc.topic, tc.partition, res, err)
		}
	}
	if _, err := c.Produce(ctx, &ProduceRequest{Records: NewRecordReader(Record{})}); err == nil {
		t.Error("Produce without a topic succeeded")
	}
	if _, err := (&Client{}).Produce(ctx, &ProduceRequest{Topic: "t", Records: NewRecordReader(Record{})}); err == nil {
		t.Error("Produce without an address succeeded")
	}
}

func TestClientProduceBrokerErrors(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	msg, bad := "record 1 is bad", "bad key"
	cl.Broker(1).Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.ProduceResponse{
			ThrottleTimeMs: 7,
			Topics: []protocol.ProduceResponseTopic{{Name: "t", Partitions: []protocol.ProduceResponsePartition{{
				Index:           0,
				ErrorCode:       int16(InvalidRecord),
				BaseOffset:      -1,
				LogAppendTimeMs: 1_700_000_000_000,
				LogStartOffset:  3,
				RecordErrors:    []protocol.ProduceRecordError{{BatchIndex: 1, BatchIndexErrorMessage: &bad}, {BatchIndex: 2}},
				ErrorMessage:    &msg,
			}}}},
		}, fakebroker.Action{}
	})
	res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireOne, Records: NewRecordReader(Record{}, Record{}, Record{})})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, InvalidRecord) || !strings.Contains(res.Error.Error(), msg) {
		t.Errorf("Error = %v; want InvalidRecord with the broker's message", res.Error)
	}
	if res.Throttle != 7*time.Millisecond || res.BaseOffset != -1 || res.LogStartOffset != 3 || !res.LogAppendTime.Equal(time.UnixMilli(1_700_000_000_000)) {
		t.Errorf("response %+v", res)
	}
	if len(res.RecordErrors) != 2 || res.RecordErrors[1].Error() != bad || !errors.Is(res.RecordErrors[2], InvalidRecord) {
		t.Errorf("RecordErrors = %v; want index 1 with its message, index 2 with the partition's error", res.RecordErrors)
	}

	// A response without the partition is the method's error.
	cl.Broker(1).Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.ProduceResponse{}, fakebroker.Action{}
	})
	if res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireOne, Records: NewRecordReader(Record{})}); err == nil {
		t.Errorf("Produce with an empty response = %+v; want an error", res)
	}
	// So is a connection closed instead of an answer.
	cl.Broker(1).Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	if res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireOne, Records: NewRecordReader(Record{})}); err == nil {
		t.Errorf("Produce on a closed connection = %+v; want an error", res)
	}
}

func TestClientProduceNoLeader(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	cl.Broker(1).Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		m := cl.Broker(1).Default(req, hdr).(*protocol.MetadataResponse)
		for i := range m.Topics {
			for j := range m.Topics[i].Partitions {
				m.Topics[i].Partitions[j].LeaderID = -1
				m.Topics[i].Partitions[j].ErrorCode = int16(LeaderNotAvailable)
			}
		}
		return m, fakebroker.Action{}
	})
	_, err := c.Produce(clientProduceCtx(t), &ProduceRequest{Topic: "t", RequiredAcks: RequireOne, Records: NewRecordReader(Record{})})
	if !errors.Is(err, LeaderNotAvailable) {
		t.Errorf("Produce without a leader: %v; want an error matching LeaderNotAvailable", err)
	}
}

// clientProduceBadBytes claims more bytes than it has.
type clientProduceBadBytes struct {
	io.Reader
	closed bool
}

func (b *clientProduceBadBytes) Len() int     { return 10 }
func (b *clientProduceBadBytes) Close() error { b.closed = true; return nil }

// clientProduceErrReader fails after its records.
type clientProduceErrReader struct{ n int }

func (r *clientProduceErrReader) ReadRecord() (*Record, error) {
	if r.n == 0 {
		return nil, errors.New("disk on fire")
	}
	r.n--
	return &Record{Value: NewBytes([]byte("v"))}, nil
}

func TestClientProduceBadRecords(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	bad := &clientProduceBadBytes{Reader: strings.NewReader("short")}
	if _, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Records: NewRecordReader(Record{Value: bad})}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Produce of a short value: %v; want io.ErrUnexpectedEOF", err)
	}
	if !bad.closed {
		t.Error("the value was not closed")
	}
	if _, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Records: &clientProduceErrReader{n: 2}}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Produce from a failing reader: %v", err)
	}
	if _, err := c.Produce(ctx, &ProduceRequest{Topic: "t", Compression: 9, Records: NewRecordReader(Record{})}); err == nil {
		t.Error("Produce with compression 9 succeeded")
	}
	if n := cl.Broker(1).Requests(protocol.Produce); n != 0 {
		t.Errorf("%d Produce requests sent; want none", n)
	}

	// Foreign Bytes are read through their Reader; the package's own are
	// consumed as well.
	own := NewBytes([]byte("own"))
	foreign := &clientProduceBadBytes{Reader: strings.NewReader("0123456789")}
	res, err := c.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireOne, Records: NewRecordReader(Record{Key: own, Value: foreign})})
	if err != nil || res.Error != nil {
		t.Fatalf("Produce = %+v, %v", res, err)
	}
	if own.Len() != 0 || !foreign.closed {
		t.Errorf("own key has %d bytes left, foreign value closed %v; want both consumed and closed", own.Len(), foreign.closed)
	}
	if recs := cl.Records("t", 0); len(recs) != 1 || string(recs[0].Key) != "own" || string(recs[0].Value) != "0123456789" {
		t.Errorf("records %+v", recs)
	}
}

func TestClientProduceRaw(t *testing.T) {
	cl, c := clientProduceFake(t, 3)
	ctx := clientProduceCtx(t)
	b := protocol.NewRecordBatchBuilder()
	b.Compression = Gzip
	b.Add(protocol.Record{Timestamp: 1000, Key: []byte("rk"), Value: []byte("rv")})
	b.Add(protocol.Record{Timestamp: 2000, Value: []byte("rv2")})
	batch, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	sized := binary.BigEndian.AppendUint32(nil, uint32(len(batch)))
	sized = append(sized, batch...)

	for i, raw := range [][]byte{sized, batch} {
		res, err := c.RawProduce(ctx, &RawProduceRequest{Topic: "t", Partition: 2, RequiredAcks: RequireAll, RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(raw)}})
		if err != nil || res.Error != nil || res.BaseOffset != int64(2*i) {
			t.Fatalf("RawProduce %d = %+v, %v", i, res, err)
		}
	}
	recs := cl.Records("t", 2)
	if len(recs) != 4 || string(recs[2].Key) != "rk" || string(recs[3].Value) != "rv2" || recs[3].Timestamp != 2000 {
		t.Errorf("records %+v", recs)
	}
	if n := cl.Broker(3).Requests(protocol.Produce); n != 2 {
		t.Errorf("the leader got %d Produce requests; want 2", n)
	}

	for name, raw := range map[string][]byte{"null": {0xff, 0xff, 0xff, 0xff}, "zero": {0, 0, 0, 0}} {
		res, err := c.RawProduce(ctx, &RawProduceRequest{Topic: "t", RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(raw)}})
		if err != nil || !clientProduceEmpty(res) {
			t.Errorf("RawProduce of a %s set = %+v, %v; want an empty response", name, res, err)
		}
	}
	for name, raw := range map[string][]byte{
		"garbage":   []byte("this is not a record batch, not even close"),
		"bad size":  append(binary.BigEndian.AppendUint32(nil, uint32(len(batch)+5)), batch...),
		"cut short": sized[:30],
	} {
		if _, err := c.RawProduce(ctx, &RawProduceRequest{Topic: "t", RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(raw)}}); !errors.Is(err, protocol.ErrCorruptRecords) {
			t.Errorf("RawProduce of %s: %v; want an error matching protocol.ErrCorruptRecords", name, err)
		}
	}
	// acks=0: no response.
	res, err := c.RawProduce(ctx, &RawProduceRequest{Topic: "t", Partition: 2, RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(batch)}})
	if res != nil || err != nil {
		t.Errorf("RawProduce acks=0 = %+v, %v; want nil, nil", res, err)
	}
}

func clientProduceEmpty(r *ProduceResponse) bool {
	return r != nil && r.Throttle == 0 && r.Error == nil && r.BaseOffset == 0 && r.LogAppendTime.IsZero() && r.LogStartOffset == 0 && r.RecordErrors == nil
}
