package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientFetchRecord is a fetched record in comparable form; "<nil>" stands
// for a null key or value.
type clientFetchRecord struct {
	offset     int64
	time       time.Time
	key, value string
	headers    []Header
}

func clientFetchString(b Bytes) (string, error) {
	if b == nil {
		return "<nil>", nil
	}
	s, err := ReadAll(b)
	return string(s), err
}

func clientFetchReadAll(t *testing.T, rr RecordReader) []clientFetchRecord {
	t.Helper()
	var out []clientFetchRecord
	for {
		r, err := rr.ReadRecord()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("ReadRecord after %d records: %v", len(out), err)
		}
		k, err := clientFetchString(r.Key)
		if err != nil {
			t.Fatal(err)
		}
		v, err := clientFetchString(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, clientFetchRecord{r.Offset, r.Time, k, v, r.Headers})
	}
}

func clientFetchCompare(t *testing.T, what string, got, want []clientFetchRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records; want %d: %+v", what, len(got), len(want), got)
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.offset != w.offset || !g.time.Equal(w.time) || g.key != w.key || g.value != w.value || len(g.headers) != len(w.headers) {
			t.Errorf("%s: record %d = %d %v %.40q %.40q %v; want %d %v %.40q %.40q %v", what, i, g.offset, g.time, g.key, g.value, g.headers, w.offset, w.time, w.key, w.value, w.headers)
			continue
		}
		for j := range w.headers {
			gh, wh := g.headers[j], w.headers[j]
			if gh.Key != wh.Key || !bytes.Equal(gh.Value, wh.Value) || (gh.Value == nil) != (wh.Value == nil) {
				t.Errorf("%s: record %d header %d = %q:%q; want %q:%q", what, i, j, gh.Key, gh.Value, wh.Key, wh.Value)
			}
		}
	}
}

func TestClientFetchRequestFields(t *testing.T) {
	cl, c := clientProduceFake(t, 3)
	ctx := clientProduceCtx(t)
	cl.AppendRecords("t", 0, "a", "b", "c")
	cl.AppendRecords("t", 0, "d", "e")

	// From the middle of a batch: earlier records are left out.
	f, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Partition: 0, Offset: 1, MinBytes: 3, MaxBytes: 1000})
	if err != nil || f.Error != nil {
		t.Fatalf("Fetch = %+v, %v", f, err)
	}
	if f.Topic != "t" || f.Partition != 0 || f.HighWatermark != 5 || f.LastStableOffset != 5 || f.LogStartOffset != 0 {
		t.Errorf("response %+v", f)
	}
	got := clientFetchReadAll(t, f.Records)
	if len(got) != 4 || got[0].offset != 1 || got[0].value != "b" || got[3].offset != 4 || got[3].value != "e" || got[0].key != "<nil>" {
		t.Errorf("records %+v; want b..e at offsets 1..4", got)
	}

	c.Timeout = 600 * time.Millisecond
	if _, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Partition: 0, Offset: 5, MaxWait: 2 * time.Second, IsolationLevel: ReadCommitted}); err != nil {
		t.Fatal(err)
	}
	c.Timeout = 0
	if _, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Partition: 0, Offset: 5, MaxWait: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	rs := cl.Broker(1).Received(protocol.Fetch)
	if len(rs) != 3 {
		t.Fatalf("the leader got %d fetches; want 3", len(rs))
	}
	for i, want := range []struct {
		wait, min, max int32
		iso            int8
	}{{500, 3, 1000, 0}, {300, 0, 0, 1}, {50, 0, 0, 0}} {
		r := rs[i].Request.(*protocol.FetchRequest)
		p := r.Topics[0].Partitions[0]
		if r.MaxWaitMs != want.wait || r.MinBytes != want.min || r.MaxBytes != want.max || r.IsolationLevel != want.iso || p.PartitionMaxBytes != want.max || r.ReplicaID != -1 {
			t.Errorf("fetch %d: wait %d min %d max %d (partition %d) isolation %d replica %d; want %+v", i, r.MaxWaitMs, r.MinBytes, r.MaxBytes, p.PartitionMaxBytes, r.IsolationLevel, r.ReplicaID, want)
		}
		if rs[i].Header.Version >= 13 && r.Topics[0].TopicID != cl.TopicID("t") {
			t.Errorf("fetch %d at v%d without the topic's id", i, rs[i].Header.Version)
		}
	}
	if n := cl.Broker(2).Requests(protocol.Fetch) + cl.Broker(3).Requests(protocol.Fetch); n != 0 {
		t.Errorf("%d fetches went to followers", n)
	}
}

func TestClientFetchByTopicName(t *testing.T) {
	// A broker without topic ids in Fetch (v12 at most) gets the name.
	cl, c := clientProduceFake(t, 1)
	cl.Broker(1).SetMaxVersion(protocol.Fetch, 12)
	cl.AppendRecords("t", 2, "x")
	f, err := c.Fetch(clientProduceCtx(t), &FetchRequest{Topic: "t", Partition: 2, MaxBytes: 1 << 16})
	if err != nil || f.Error != nil {
		t.Fatalf("Fetch = %+v, %v", f, err)
	}
	if got := clientFetchReadAll(t, f.Records); len(got) != 1 || got[0].value != "x" {
		t.Errorf("records %+v", got)
	}
	if rs := cl.Broker(1).Received(protocol.Fetch); len(rs) != 1 || rs[0].Header.Version != 12 {
		t.Errorf("fetches %+v; want one at v12", rs)
	}
}

func TestClientFetchFirstAndLastOffset(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	cl.AppendRecords("t", 0, "a", "b", "c")
	f, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Offset: FirstOffset, MaxBytes: 1 << 16})
	if err != nil || f.Error != nil {
		t.Fatalf("Fetch(FirstOffset) = %+v, %v", f, err)
	}
	if got := clientFetchReadAll(t, f.Records); len(got) != 3 || got[0].offset != 0 {
		t.Errorf("FirstOffset records %+v", got)
	}
	f, err = c.Fetch(ctx, &FetchRequest{Topic: "t", Offset: LastOffset, MaxBytes: 1 << 16})
	if err != nil || f.Error != nil {
		t.Fatalf("Fetch(LastOffset) = %+v, %v", f, err)
	}
	if got := clientFetchReadAll(t, f.Records); len(got) != 0 || f.HighWatermark != 3 {
		t.Errorf("LastOffset records %+v, high watermark %d; want none, 3", got, f.HighWatermark)
	}
	if r := cl.Broker(1).Received(protocol.Fetch); len(r) != 2 || r[1].Request.(*protocol.FetchRequest).Topics[0].Partitions[0].FetchOffset != 3 {
		t.Errorf("LastOffset fetch was not at offset 3")
	}
	// A ListOffsets error is the method's.
	cl.Broker(1).ScriptNext(protocol.ListOffsets, fakebroker.Step{ErrorCode: int16(NotLeaderForPartition)})
	if _, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Offset: FirstOffset}); !errors.Is(err, NotLeaderForPartition) {
		t.Errorf("Fetch(FirstOffset) with a failing ListOffsets: %v", err)
	}
}

func TestClientFetchErrors(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	cl.AppendRecords("t", 0, "a")

	f, err := c.Fetch(ctx, &FetchRequest{Topic: "t", Offset: 42})
	if err != nil || !errors.Is(f.Error, OffsetOutOfRange) {
		t.Fatalf("Fetch out of range = %+v, %v; want OffsetOutOfRange in the response", f, err)
	}
	if r, err := f.Records.ReadRecord(); r != nil || err != io.EOF {
		t.Errorf("records of a failed fetch: %v, %v; want io.EOF", r, err)
	}

	for _, tc := range []struct {
		topic     string
		partition int
	}{{"t", 3}, {"nope", 0}} {
		if f, err := c.Fetch(ctx, &FetchRequest{Topic: tc.topic, Partition: tc.partition}); !errors.Is(err, UnknownTopicOrPartition) {
			t.Errorf("Fetch %s/%d = %+v, %v; want an error matching UnknownTopicOrPartition", tc.topic, tc.partition, f, err)
		}
	}
	if _, err := c.Fetch(ctx, nil); err == nil {
		t.Error("Fetch(nil) succeeded")
	}
	if _, err := c.Fetch(ctx, &FetchRequest{Topic: "t", MaxBytes: -1}); err == nil {
		t.Error("Fetch with MaxBytes -1 succeeded")
	}

	// A request-level error comes in the response.
	cl.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Response: &protocol.FetchResponse{ErrorCode: int16(FetchSessionIDNotFound)}})
	if f, err := c.Fetch(ctx, &FetchRequest{Topic: "t"}); err != nil || !errors.Is(f.Error, FetchSessionIDNotFound) {
		t.Errorf("Fetch with a top-level error = %+v, %v", f, err)
	}
	// A response without the partition, or no response, is the method's
	// error.
	cl.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Response: &protocol.FetchResponse{}})
	if f, err := c.Fetch(ctx, &FetchRequest{Topic: "t"}); err == nil {
		t.Errorf("Fetch with an empty response = %+v; want an error", f)
	}
	// A kept connection the broker closes without a byte of answer is
	// taken for one it dropped while idle: the request goes again on a
	// fresh connection. Closed there too, the Fetch fails.
	closeConn := fakebroker.Step{Action: fakebroker.Action{Close: true}}
	cl.Broker(1).ScriptNext(protocol.Fetch, closeConn)
	if _, err := c.Fetch(ctx, &FetchRequest{Topic: "t"}); err != nil {
		t.Errorf("Fetch after the kept connection closed: %v", err)
	}
	cl.Broker(1).ScriptNext(protocol.Fetch, closeConn)
	cl.Broker(1).ScriptNext(protocol.Fetch, closeConn)
	if f, err := c.Fetch(ctx, &FetchRequest{Topic: "t"}); err == nil {
		t.Errorf("Fetch on a connection closed twice = %+v; want an error", f)
	}
}

// clientFetchServe makes broker 1 answer fetches of t/0 with records.
func clientFetchServe(cl *fakebroker.Cluster, records []byte) {
	b := cl.Broker(1)
	b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.FetchRequest)
		return &protocol.FetchResponse{Topics: []protocol.FetchResponseTopic{{
			Topic:   r.Topics[0].Topic,
			TopicID: r.Topics[0].TopicID,
			Partitions: []protocol.FetchResponsePartition{{
				HighWatermark: 100, LastStableOffset: 100, PreferredReadReplica: -1, Records: records,
			}},
		}}}, fakebroker.Action{}
	})
}

func clientFetchBatch(t *testing.T, codec Compression, base int64, values ...string) []byte {
	t.Helper()
	b := protocol.NewRecordBatchBuilder()
	b.BaseOffset = base
	b.Compression = codec
	for i, v := range values {
		b.Add(protocol.Record{Timestamp: int64(1000 + i), Key: []byte("k"), Value: []byte(v), Headers: []protocol.RecordHeader{{Key: "i", Value: []byte{byte(i)}}}})
	}
	batch, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

func TestClientFetchHostileRecords(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	ctx := clientProduceCtx(t)
	good := clientFetchBatch(t, 0, 0, "a", "b")
	good = append(good, clientFetchBatch(t, Snappy, 2, "c", "d")...)

	// A batch cut at the end is where the response stops, not an error.
	clientFetchServe(cl, good[:len(good)-5])
	f, err := c.Fetch(ctx, &FetchRequest{Topic: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got := clientFetchReadAll(t, f.Records); len(got) != 2 || got[1].value != "b" {
		t.Errorf("records of a cut response %+v; want a and b", got)
	}

	// A corrupt batch is an error from ReadRecord, after the good ones.
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff
	clientFetchServe(cl, bad)
	if f, err = c.Fetch(ctx, &FetchRequest{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	var n int
	for {
		r, err := f.Records.ReadRecord()
		if err == nil {
			n++
			continue
		}
		if !errors.Is(err, protocol.ErrCRCMismatch) || r != nil {
			t.Errorf("ReadRecord of a corrupt batch: %v, %v; want ErrCRCMismatch", r, err)
		}
		break
	}
	if n != 2 {
		t.Errorf("%d records before the corrupt batch; want 2", n)
	}

	// Random damage never panics; every record comes whole or ReadRecord
	// fails. (The decoder ignores CRCs nowhere, so most damage fails.)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		data := append([]byte(nil), good...)
		for j := 0; j < 1+rng.Intn(4); j++ {
			data[rng.Intn(len(data))] = byte(rng.Intn(256))
		}
		if i%3 == 0 {
			data = data[:rng.Intn(len(data))]
		}
		rr := &clientFetchRecords{topic: "t", r: protocol.NewRecordReader(data, protocol.RecordReadOptions{})}
		for k := 0; k < 10; k++ {
			r, err := rr.ReadRecord()
			if err != nil {
				break
			}
			if _, err := ReadAll(r.Value); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestClientFetchReadCommitted(t *testing.T) {
	cl, c := clientProduceFake(t, 1)
	// A transactional batch of producer 7 at offset 0, aborted.
	b := protocol.NewRecordBatchBuilder()
	b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.Transactional = 7, 0, 0, true
	b.Add(protocol.Record{Timestamp: 1, Value: []byte("aborted")})
	batch, _ := b.AppendTo(nil)
	batch = append(batch, clientFetchBatch(t, 0, 1, "plain")...)
	cl.Broker(1).Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.FetchRequest)
		return &protocol.FetchResponse{Topics: []protocol.FetchResponseTopic{{
			Topic: r.Topics[0].Topic, TopicID: r.Topics[0].TopicID,
			Partitions: []protocol.FetchResponsePartition{{
				HighWatermark: 2, LastStableOffset: 2, PreferredReadReplica: -1, Records: batch,
				AbortedTransactions: []protocol.FetchAbortedTransaction{{ProducerID: 7, FirstOffset: 0}},
			}},
		}}}, fakebroker.Action{}
	})
	for _, tc := range []struct {
		iso  IsolationLevel
		want int
	}{{ReadUncommitted, 2}, {ReadCommitted, 1}} {
		f, err := c.Fetch(clientProduceCtx(t), &FetchRequest{Topic: "t", IsolationLevel: tc.iso})
		if err != nil {
			t.Fatal(err)
		}
		if got := clientFetchReadAll(t, f.Records); len(got) != tc.want || got[len(got)-1].value != "plain" {
			t.Errorf("isolation %d: records %+v; want %d ending with plain", tc.iso, got, tc.want)
		}
	}
}

func TestClientFetchRecordsOutliveReads(t *testing.T) {
	// Keys and values stay readable after later ReadRecord calls.
	var data []byte
	var want []string
	for i := 0; i < 3*clientFetchBytesChunk; i += 10 {
		var vs []string
		for j := i; j < i+10; j++ {
			vs = append(vs, fmt.Sprint("value-", j))
		}
		want = append(want, vs...)
		data = append(data, clientFetchBatch(t, Lz4, int64(i), vs...)...)
	}
	rr := &clientFetchRecords{topic: "t", r: protocol.NewRecordReader(data, protocol.RecordReadOptions{})}
	var values []Bytes
	for {
		r, err := rr.ReadRecord()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, r.Value)
	}
	if len(values) != len(want) {
		t.Fatalf("%d records; want %d", len(values), len(want))
	}
	for i, v := range values {
		if s, _ := clientFetchString(v); s != want[i] {
			t.Fatalf("value %d = %q; want %q", i, s, want[i])
		}
	}
}

// TestClientFetchHostileFrames answers the Fetch with broken frames, from a
// raw peer (a fake broker only sends well-formed ones): the method fails
// with an error saying what it was doing, without panicking or trusting
// lengths for allocation.
func TestClientFetchHostileFrames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(frame []byte) ([]byte, bool)
	}{
		{"truncated frame then close", func(f []byte) ([]byte, bool) { return f[:len(f)/2], true }},
		{"size prefix claims 2 GB", func(f []byte) ([]byte, bool) { return binary.BigEndian.AppendUint32(nil, 2_000_000_000), false }},
		{"garbage body", func(f []byte) ([]byte, bool) {
			body := append(append([]byte(nil), f[4:8]...), bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 16)...)
			return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...), false
		}},
		{"body cut inside the records", func(f []byte) ([]byte, bool) {
			f = append([]byte(nil), f[:len(f)-40]...)
			binary.BigEndian.PutUint32(f, uint32(len(f)-4))
			return f, false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var host string
			var port int32
			rb := newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
				flexible := protocol.IsFlexible(req, hdr.Version)
				switch hdr.Key {
				case protocol.Metadata:
					resp := &protocol.MetadataResponse{
						Brokers:      []protocol.MetadataResponseBroker{{NodeID: 1, Host: host, Port: port}},
						ControllerID: 1,
						Topics: []protocol.MetadataResponseTopic{{Name: ctTopic, Partitions: []protocol.MetadataResponsePartition{{
							LeaderID: 1, ReplicaNodes: []int32{1}, IsrNodes: []int32{1},
						}}}},
					}
					return protocol.AppendResponse(nil, resp, hdr.Version, flexible, hdr.CorrelationID), false
				case protocol.Fetch:
					return tc.answer(ctFetchFrame(t, hdr, hdr.CorrelationID))
				}
				t.Errorf("raw broker: unexpected %s", hdr.Key)
				return nil, true
			})
			h, p, _ := net.SplitHostPort(rb.ln.Addr().String())
			n, _ := strconv.Atoi(p)
			host, port = h, int32(n)
			tr := &Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			c := &Client{Addr: TCP(rb.ln.Addr().String()), Transport: tr, Timeout: 5 * time.Second}

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := c.Fetch(clientProduceCtx(t), &FetchRequest{Topic: ctTopic, MaxBytes: 1 << 20})
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("Fetch = %+v; want an error", res)
			}
			if msg := err.Error(); !strings.Contains(msg, "kafka.(*Client).Fetch: fetching "+ctTopic+"/0") || !strings.Contains(msg, "Fetch v12") {
				t.Errorf("error %q does not say what was being done", msg)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Errorf("the answer made Fetch allocate %d bytes", grown)
			}
		})
	}
}
