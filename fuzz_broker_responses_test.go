package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
)

// Operations of FuzzBrokerResponses: each makes the Conn send one kind of
// request (ReadOffsets sends two ListOffsets), answered with the fuzzed body.
const (
	fuzzMetadata = iota
	fuzzListOffsets
	fuzzProduce
	fuzzFetch
	fuzzOps
)

// fuzzVersions is what the scripted broker advertises: the client's
// highest versions, except Fetch, kept below v13 so that the fetch names
// its topic and needs no Metadata request first.
var fuzzVersions = map[protocol.ApiKey]int16{
	protocol.ApiVersions: 3, protocol.Metadata: 12, protocol.ListOffsets: 10, protocol.Produce: 12, protocol.Fetch: 12,
}

// fuzzRequests are the requests of each operation, for their versions.
var fuzzRequests = [fuzzOps]protocol.Request{
	&protocol.MetadataRequest{}, &protocol.ListOffsetsRequest{}, &protocol.ProduceRequest{}, &protocol.FetchRequest{},
}

// scriptedBroker answers ApiVersions with fuzzVersions and every other
// request with body after the response header's correlation id, until c
// closes.
func scriptedBroker(c net.Conn, body []byte) {
	defer c.Close()
	keys := make([]protocol.ApiVersionsKey, 0, len(fuzzVersions))
	for k, max := range fuzzVersions {
		keys = append(keys, protocol.ApiVersionsKey{ApiKey: k, MaxVersion: max})
	}
	for {
		frame, err := protocol.ReadFrame(c, nil, 1<<20)
		if err != nil {
			return
		}
		hdr, _, err := protocol.DecodeRequestHeader(frame, protocol.FlexibleFrom)
		if err != nil {
			return
		}
		var out []byte
		if hdr.Key == protocol.ApiVersions {
			out = protocol.AppendResponse(nil, &protocol.ApiVersionsResponse{ApiKeys: keys}, hdr.Version, hdr.Version >= 3, hdr.CorrelationID)
		} else {
			out = binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
			out = binary.BigEndian.AppendUint32(out, uint32(hdr.CorrelationID))
			out = append(out, body...)
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// fuzzExchange runs operation op of a Conn on partition t/0 against a
// broker answering body, within timeout (an answer the Conn retries on,
// such as a retriable error code, ends there); it returns what the
// operation read, or its error.
func fuzzExchange(op byte, body []byte, timeout time.Duration) (any, error) {
	client, server := net.Pipe()
	go scriptedBroker(server, body)
	conn := NewConnWith(client, ConnConfig{Topic: "t", Partition: 0})
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	switch op % fuzzOps {
	case fuzzMetadata:
		return conn.ReadPartitions("t")
	case fuzzListOffsets:
		first, last, err := conn.ReadOffsets()
		return [2]int64{first, last}, err
	case fuzzProduce:
		return conn.WriteMessages(Message{Value: []byte("v")})
	default:
		if _, err := conn.Seek(0, SeekAbsolute|SeekDontCheck); err != nil {
			return nil, err
		}
		batch := conn.ReadBatch(1, 1<<20)
		var values []string
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				cerr := batch.Close()
				if errors.Is(err, io.EOF) {
					return values, cerr
				}
				return values, err
			}
			values = append(values, string(m.Value))
		}
	}
}

// fuzzSeeds returns, for each operation, a valid answer at the version the
// Conn uses against fuzzVersions.
func fuzzSeeds(t testing.TB) [fuzzOps][]byte {
	rb := protocol.NewRecordBatchBuilder()
	rb.Compression = compress.Zstd
	rb.Add(protocol.Record{Timestamp: 1, Value: []byte("one")})
	rb.Add(protocol.Record{Timestamp: 2, Value: []byte("two")})
	records, err := rb.AppendTo(nil)
	require.NoError(t, err)
	cluster := "c"
	resps := [fuzzOps]protocol.Response{
		&protocol.MetadataResponse{ClusterID: &cluster, ControllerID: 1,
			Brokers: []protocol.MetadataResponseBroker{{NodeID: 1, Host: "localhost", Port: 9092}},
			Topics: []protocol.MetadataResponseTopic{{Name: "t", Partitions: []protocol.MetadataResponsePartition{
				{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1}, IsrNodes: []int32{1}}}}}},
		&protocol.ListOffsetsResponse{Topics: []protocol.ListOffsetsResponseTopic{{Name: "t",
			Partitions: []protocol.ListOffsetsResponsePartition{{PartitionIndex: 0, Timestamp: -1, Offset: 2, LeaderEpoch: -1}}}}},
		&protocol.ProduceResponse{Topics: []protocol.ProduceResponseTopic{{Name: "t",
			Partitions: []protocol.ProduceResponsePartition{{Index: 0, BaseOffset: 2, LogAppendTimeMs: -1}}}}},
		&protocol.FetchResponse{Topics: []protocol.FetchResponseTopic{{Topic: "t", Partitions: []protocol.FetchResponsePartition{
			{PartitionIndex: 0, HighWatermark: 2, LastStableOffset: 2, PreferredReadReplica: -1, Records: records}}}}},
	}
	var seeds [fuzzOps][]byte
	for op, resp := range resps {
		req := fuzzRequests[op]
		v := fuzzVersions[req.Key()]
		frame := protocol.AppendResponse(nil, resp, v, protocol.IsFlexible(req, v), 0)
		seeds[op] = frame[8:] // after the size and the correlation id
	}
	return seeds
}

// TestFuzzBrokerResponsesSeeds checks that the seeds are answers the Conn
// reads correctly, so that fuzzing starts from the paths that matter.
func TestFuzzBrokerResponsesSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	want := [fuzzOps]func(any){
		func(got any) { require.Equal(t, 1, got.([]Partition)[0].Leader.ID) },
		func(got any) { require.Equal(t, [2]int64{2, 2}, got) },
		func(got any) { require.Equal(t, 1, got) },
		func(got any) { require.Equal(t, []string{"one", "two"}, got) },
	}
	for op := range seeds {
		got, err := fuzzExchange(byte(op), seeds[op], 10*time.Second)
		require.NoError(t, err, "op %d", op)
		want[op](got)
	}
}

// FuzzBrokerResponses feeds fuzzed bytes to a Conn as the answer of a
// Metadata, ListOffsets, Produce or Fetch request: it must not panic, must
// allocate within the decompression limit (plus the frame) and must end
// with an error or with what it read.
func FuzzBrokerResponses(f *testing.F) {
	for op, seed := range fuzzSeeds(f) {
		f.Add(byte(op), seed)
	}
	f.Fuzz(func(t *testing.T, op byte, body []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fuzzExchange(op, body, 500*time.Millisecond)
		runtime.ReadMemStats(&after)
		bound := uint64(compress.DefaultDecodeLimit)*12/10 + 16<<20
		require.Less(t, after.TotalAlloc-before.TotalAlloc, bound, "op %d, %d bytes", op%fuzzOps, len(body))
	})
}
