package integration

// Integration tests of Client.Produce, RawProduce and Fetch against the real 3-rack cluster: every codec
// with headers read back exactly, each RequiredAcks, fetch errors and produce to a partition that does not
// exist.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

func cprodClient(t *testing.T, c *ktesting.Cluster) *kafka.Client {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 20 * time.Second, Transport: tr}
}

// cprodRecord is a record in comparable form; "<nil>" is a null key or value.
type cprodRecord struct {
	offset     int64
	time       time.Time
	key, value string
	headers    []kafka.Header
}

func cprodString(t *testing.T, b kafka.Bytes) string {
	t.Helper()
	if b == nil {
		return "<nil>"
	}
	s, err := kafka.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

func cprodReadAll(t *testing.T, rr kafka.RecordReader) []cprodRecord {
	t.Helper()
	var out []cprodRecord
	for {
		r, err := rr.ReadRecord()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("ReadRecord after %d records: %v", len(out), err)
		}
		out = append(out, cprodRecord{r.Offset, r.Time, cprodString(t, r.Key), cprodString(t, r.Value), r.Headers})
	}
}

func cprodSame(t *testing.T, what string, got, want cprodRecord) {
	t.Helper()
	same := got.offset == want.offset && got.time.Equal(want.time) && got.key == want.key && got.value == want.value && len(got.headers) == len(want.headers)
	for i := 0; same && i < len(want.headers); i++ {
		g, w := got.headers[i], want.headers[i]
		same = g.Key == w.Key && bytes.Equal(g.Value, w.Value) && (g.Value == nil) == (w.Value == nil)
	}
	if !same {
		t.Errorf("%s: got %d %v %.30q %.30q %q; want %d %v %.30q %.30q %q", what, got.offset, got.time, got.key, got.value, got.headers, want.offset, want.time, want.key, want.value, want.headers)
	}
}

// cprodFetch fetches from offset until n records came (acks=0 records may not be readable at once).
func cprodFetch(t *testing.T, c *kafka.Client, topic string, partition int, offset int64, n int) []cprodRecord {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	var got []cprodRecord
	eventually(t, 20*time.Second, fmt.Sprintf("%d records of %s/%d from offset %d", n, topic, partition, offset), func() bool {
		res, err := c.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: partition, Offset: offset, MaxBytes: 1 << 20})
		if err != nil {
			t.Fatalf("Fetch %s/%d at %d: %v", topic, partition, offset, err)
		}
		if res.Error != nil {
			t.Fatalf("Fetch %s/%d at %d: response error %v", topic, partition, offset, res.Error)
		}
		got = append(got, cprodReadAll(t, res.Records)...)
		if len(got) > 0 {
			offset = got[len(got)-1].offset + 1
		}
		return len(got) >= n
	})
	return got
}

func TestClientProduceIntegrationCodecs(t *testing.T) {
	c := requireRackCluster(t)
	codecs := []kafka.Compression{0, kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: len(codecs)})
	client := cprodClient(t, c)
	ctx := testContext(t, time.Minute)
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for i, codec := range codecs {
		name := codec.String()
		big := string(bytes.Repeat([]byte("compressible "+name+" value "), 400))
		batches := [][]cprodRecord{{
			{0, base, "key-0", big, []kafka.Header{{Key: "trace", Value: []byte("t-0")}, {Key: "codec", Value: []byte(name)}}},
			{1, base.Add(time.Millisecond), "<nil>", "no key", nil},
			{2, base.Add(2 * time.Millisecond), "key-2", "\x00\x01\xff", []kafka.Header{{Key: "empty", Value: []byte{}}, {Key: "null"}}},
		}, {
			{3, base.Add(3 * time.Millisecond), "key-3", "<nil>", nil}, // a tombstone
			{4, base.Add(-time.Hour), "", "", []kafka.Header{{Key: "a", Value: []byte("1")}, {Key: "a", Value: []byte("2")}}},
		}}
		var want []cprodRecord
		for _, batch := range batches {
			recs := make([]kafka.Record, len(batch))
			for j, r := range batch {
				recs[j] = kafka.Record{Time: r.time, Headers: r.headers}
				if r.key != "<nil>" {
					recs[j].Key = kafka.NewBytes([]byte(r.key))
				}
				if r.value != "<nil>" {
					recs[j].Value = kafka.NewBytes([]byte(r.value))
				}
			}
			res, err := client.Produce(ctx, &kafka.ProduceRequest{Topic: topic, Partition: i, RequiredAcks: kafka.RequireAll, Compression: codec, Records: kafka.NewRecordReader(recs...)})
			if err != nil || res.Error != nil {
				t.Fatalf("%s: Produce = %+v, %v", name, res, err)
			}
			if res.BaseOffset != int64(len(want)) || res.RecordErrors != nil || !res.LogAppendTime.IsZero() {
				t.Errorf("%s: Produce response %+v; want base offset %d", name, res, len(want))
			}
			want = append(want, batch...)
		}
		got := cprodFetch(t, client, topic, i, 0, len(want))
		if len(got) != len(want) {
			t.Fatalf("%s: %d records; want %d", name, len(got), len(want))
		}
		for j := range want {
			cprodSame(t, fmt.Sprintf("%s record %d", name, j), got[j], want[j])
		}
		// From inside a (compressed) batch, the records before the offset are left out.
		if got := cprodFetch(t, client, topic, i, 1, len(want)-1); len(got) != len(want)-1 || got[0].offset != 1 {
			t.Errorf("%s: fetch from offset 1 gave %d records starting at %d", name, len(got), got[0].offset)
		}
	}
}

func TestClientProduceIntegrationAcks(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	client := cprodClient(t, c)
	ctx := testContext(t, time.Minute)
	for i, acks := range []kafka.RequiredAcks{kafka.RequireAll, kafka.RequireOne, kafka.RequireNone} {
		res, err := client.Produce(ctx, &kafka.ProduceRequest{Topic: topic, RequiredAcks: acks, Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte(acks.String()))})})
		switch {
		case err != nil:
			t.Fatalf("Produce acks=%s: %v", acks, err)
		case acks == kafka.RequireNone:
			if res != nil {
				t.Errorf("Produce acks=none = %+v; want a nil response", res)
			}
		case res.Error != nil || res.BaseOffset != int64(i) || res.LogStartOffset != 0:
			t.Errorf("Produce acks=%s = %+v; want base offset %d", acks, res, i)
		}
	}
	got := cprodFetch(t, client, topic, 0, 0, 3)
	for i, want := range []string{"all", "one", "none"} {
		if got[i].offset != int64(i) || got[i].value != want {
			t.Errorf("record %d = %d %q; want %d %q", i, got[i].offset, got[i].value, i, want)
		}
	}
	// Nothing is lost on the connection the acks=0 request used.
	res, err := client.Produce(ctx, &kafka.ProduceRequest{Topic: topic, RequiredAcks: kafka.RequireOne, Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte("after"))})})
	if err != nil || res.Error != nil || res.BaseOffset != 3 {
		t.Errorf("Produce after acks=none = %+v, %v; want base offset 3", res, err)
	}
}

func TestClientFetchIntegrationOffsets(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	client := cprodClient(t, c)
	ctx := testContext(t, time.Minute)
	recs := []kafka.Record{{Value: kafka.NewBytes([]byte("a"))}, {Value: kafka.NewBytes([]byte("b"))}}
	if res, err := client.Produce(ctx, &kafka.ProduceRequest{Topic: topic, RequiredAcks: kafka.RequireAll, Records: kafka.NewRecordReader(recs...)}); err != nil || res.Error != nil {
		t.Fatalf("Produce = %+v, %v", res, err)
	}

	res, err := client.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Offset: 1000, MaxBytes: 1 << 16})
	if err != nil {
		t.Fatalf("Fetch out of range: %v", err)
	}
	if !errors.Is(res.Error, kafka.OffsetOutOfRange) || res.Records == nil {
		t.Errorf("Fetch out of range = %+v; want OffsetOutOfRange in Error and a Records reader", res)
	}

	res, err = client.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Offset: kafka.FirstOffset, MaxBytes: 1 << 16})
	if err != nil || res.Error != nil {
		t.Fatalf("Fetch(FirstOffset) = %+v, %v", res, err)
	}
	if got := cprodReadAll(t, res.Records); len(got) != 2 || got[0].value != "a" || res.HighWatermark != 2 || res.LastStableOffset != 2 || res.LogStartOffset != 0 {
		t.Errorf("Fetch(FirstOffset): %+v, %+v", got, res)
	}
	// kafka-go's defaults (MaxBytes 0): the broker still returns the first batch whole.
	res, err = client.Fetch(ctx, &kafka.FetchRequest{Topic: topic})
	if err != nil || res.Error != nil {
		t.Fatalf("Fetch with MaxBytes 0 = %+v, %v", res, err)
	}
	if got := cprodReadAll(t, res.Records); len(got) != 2 || got[1].value != "b" {
		t.Errorf("Fetch with MaxBytes 0: %+v; want the first batch (a, b)", got)
	}
	start := time.Now()
	res, err = client.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Offset: kafka.LastOffset, MinBytes: 1, MaxBytes: 1 << 16, MaxWait: 200 * time.Millisecond, IsolationLevel: kafka.ReadCommitted})
	if err != nil || res.Error != nil {
		t.Fatalf("Fetch(LastOffset) = %+v, %v", res, err)
	}
	if got := cprodReadAll(t, res.Records); len(got) != 0 {
		t.Errorf("Fetch(LastOffset) returned %+v; want nothing", got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Fetch(LastOffset) with MaxWait 200ms took %v", d)
	}
}

func TestClientProduceIntegrationUnknownPartition(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	client := cprodClient(t, c)
	ctx := testContext(t, time.Minute)
	for _, tc := range []struct {
		topic     string
		partition int
	}{{topic, 7}, {topic + "-missing", 0}} {
		res, err := client.Produce(ctx, &kafka.ProduceRequest{Topic: tc.topic, Partition: tc.partition, RequiredAcks: kafka.RequireAll, Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte("x"))})})
		if res != nil || !errors.Is(err, kafka.UnknownTopicOrPartition) {
			t.Errorf("Produce to %s/%d = %+v, %v; want an error matching UnknownTopicOrPartition", tc.topic, tc.partition, res, err)
		}
		if f, err := client.Fetch(ctx, &kafka.FetchRequest{Topic: tc.topic, Partition: tc.partition}); f != nil || !errors.Is(err, kafka.UnknownTopicOrPartition) {
			t.Errorf("Fetch %s/%d = %+v, %v; want an error matching UnknownTopicOrPartition", tc.topic, tc.partition, f, err)
		}
	}
}

func TestClientProduceIntegrationRaw(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	client := cprodClient(t, c)
	ctx := testContext(t, time.Minute)
	now := time.Now().Truncate(time.Millisecond)
	b := protocol.NewRecordBatchBuilder()
	b.Compression = kafka.Zstd
	for i := 0; i < 2; i++ {
		b.Add(protocol.Record{Timestamp: now.UnixMilli(), Key: []byte(fmt.Sprint("raw-", i)), Value: []byte("zstd"), Headers: []protocol.RecordHeader{{Key: "i", Value: []byte{byte(i)}}}})
	}
	raw, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	// As kafka-go encodes record sets: an int32 size, then the batch (Produce v3+ takes exactly one).
	sized := append(binary.BigEndian.AppendUint32(nil, uint32(len(raw))), raw...)
	res, err := client.RawProduce(ctx, &kafka.RawProduceRequest{Topic: topic, RequiredAcks: kafka.RequireAll, RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(sized)}})
	if err != nil || res.Error != nil || res.BaseOffset != 0 {
		t.Fatalf("RawProduce = %+v, %v", res, err)
	}
	// The batch alone is taken too.
	res, err = client.RawProduce(ctx, &kafka.RawProduceRequest{Topic: topic, RequiredAcks: kafka.RequireOne, RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(raw)}})
	if err != nil || res.Error != nil || res.BaseOffset != 2 {
		t.Fatalf("RawProduce of a bare batch = %+v, %v", res, err)
	}
	got := cprodFetch(t, client, topic, 0, 0, 4)
	for i, want := range []cprodRecord{
		{0, now, "raw-0", "zstd", []kafka.Header{{Key: "i", Value: []byte{0}}}},
		{1, now, "raw-1", "zstd", []kafka.Header{{Key: "i", Value: []byte{1}}}},
		{2, now, "raw-0", "zstd", []kafka.Header{{Key: "i", Value: []byte{0}}}},
		{3, now, "raw-1", "zstd", []kafka.Header{{Key: "i", Value: []byte{1}}}},
	} {
		cprodSame(t, fmt.Sprint("raw record ", i), got[i], want)
	}
}
