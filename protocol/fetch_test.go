package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"
)

// Helpers shared by the data-path message tests (fetch, metadata,
// listoffsets, offsetforleaderepoch, produce).

func dpStr(s string) *string { return &s }

// dpBE lays out bytes by hand, independently of Encoder: int8, int16, int32
// and int64 are written big-endian, a byte (uint8) as itself, a string as
// its raw characters (lengths are written by the caller) and []byte as is.
func dpBE(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch x := p.(type) {
		case int8:
			b = append(b, byte(x))
		case byte:
			b = append(b, x)
		case int16:
			b = binary.BigEndian.AppendUint16(b, uint16(x))
		case int32:
			b = binary.BigEndian.AppendUint32(b, uint32(x))
		case int64:
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		case string:
			b = append(b, x...)
		case []byte:
			b = append(b, x...)
		case [16]byte:
			b = append(b, x[:]...)
		default:
			panic(fmt.Sprintf("dpBE: unsupported %T", p))
		}
	}
	return b
}

// dpCheck checks that want encodes to exactly b at version v and that b
// decodes (into got) back to want, consuming every byte.
func dpCheck(t *testing.T, b []byte, v int16, flexible bool, want, got Message) {
	t.Helper()
	e := Encoder{Flexible: flexible}
	want.Encode(&e, v)
	if !bytes.Equal(e.B, b) {
		t.Errorf("%T v%d encoding:\nwant % x\n got % x", want, v, b, e.B)
	}
	d := NewDecoder(b, flexible)
	if err := got.Decode(d, v); err != nil {
		t.Fatalf("%T v%d decoding: %v", got, v, err)
	}
	if d.Remaining() != 0 {
		t.Errorf("%T v%d: %d bytes left after decoding", got, v, d.Remaining())
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%T v%d decoding:\nwant %+v\n got %+v", got, v, want, got)
	}
}

// dpFuzzResponse decodes data as the body of a response at each version;
// whatever decodes must encode and decode again to the same value.
func dpFuzzResponse(t *testing.T, data []byte, versions []int16, flexibleFrom int16, newResp func() Response) {
	for _, v := range versions {
		flexible := v >= flexibleFrom
		r := newResp()
		if r.Decode(NewDecoder(data, flexible), v) != nil {
			continue
		}
		e := Encoder{Flexible: flexible}
		r.Encode(&e, v)
		again := newResp()
		d := NewDecoder(e.B, flexible)
		if err := again.Decode(d, v); err != nil {
			t.Fatalf("v%d: re-encoded value does not decode: %v", v, err)
		}
		if d.Remaining() != 0 {
			t.Fatalf("v%d: %d bytes left decoding a re-encoded value", v, d.Remaining())
		}
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("v%d: re-encoding changed the value:\n first %+v\nsecond %+v", v, r, again)
		}
	}
}

var (
	dpTopicID  = [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	dpTopicID2 = [16]byte{15: 1}
)

func goldenFetchRequest(v int16) *FetchRequest {
	r := &FetchRequest{
		ReplicaID: -1,
		MaxWaitMs: 500,
		MinBytes:  1,
		MaxBytes:  52428800,
	}
	if v >= 15 {
		r.ReplicaEpoch = -1 // a consumer: the ReplicaState tag stays absent
	}
	if v >= 4 {
		r.IsolationLevel = 1
	}
	if v >= 7 {
		r.SessionID, r.SessionEpoch = 77, 3
	}
	t := FetchRequestTopic{Partitions: []FetchRequestPartition{
		{Partition: 0, FetchOffset: 100, PartitionMaxBytes: 1 << 20},
		{Partition: 3, FetchOffset: 1 << 40, PartitionMaxBytes: 1 << 20},
	}}
	if v >= 13 {
		t.TopicID = dpTopicID
	} else {
		t.Topic = "events"
	}
	for i := range t.Partitions {
		p := &t.Partitions[i]
		if v >= 9 {
			p.CurrentLeaderEpoch = 5
		}
		if v >= 12 {
			p.LastFetchedEpoch = 4
		}
		if v >= 5 {
			p.LogStartOffset = -1
		}
	}
	r.Topics = []FetchRequestTopic{t}
	if v >= 7 {
		f := FetchForgottenTopic{Partitions: []int32{1, 2}}
		if v >= 13 {
			f.TopicID = dpTopicID2
		} else {
			f.Topic = "old"
		}
		r.ForgottenTopics = []FetchForgottenTopic{f}
	}
	if v >= 11 {
		r.RackID = "us-east-1a"
	}
	return r
}

// goldenFollowerFetchRequest fills the fields only a follower sends.
func goldenFollowerFetchRequest(v int16) *FetchRequest {
	r := goldenFetchRequest(v)
	r.ReplicaID = 2
	if v >= 15 {
		r.ReplicaEpoch = 1234
	}
	if v >= 12 {
		r.ClusterID = dpStr("cluster-x")
	}
	if v >= 17 {
		r.Topics[0].Partitions[1].ReplicaDirectoryID = dpTopicID2
	}
	return r
}

// goldenFetchResponse returns a response with every field of version v set;
// partitions gives the number of partitions of its single topic (at least 2).
func goldenFetchResponse(v int16, partitions int) *FetchResponse {
	r := &FetchResponse{ThrottleTimeMs: 10}
	if v >= 7 {
		r.SessionID = 77
	}
	t := FetchResponseTopic{}
	if v >= 13 {
		t.TopicID = dpTopicID
	} else {
		t.Topic = "events"
	}
	for i := 0; i < partitions; i++ {
		p := FetchResponsePartition{
			PartitionIndex:       int32(i),
			HighWatermark:        1000 + int64(i),
			PreferredReadReplica: -1,
			Records:              bytes.Repeat([]byte{byte(i)}, 64+i),
		}
		if v >= 4 {
			p.LastStableOffset = 990
		}
		if v >= 5 {
			p.LogStartOffset = 5
		}
		if v >= 11 {
			p.PreferredReadReplica = int32(i % 3)
		}
		t.Partitions = append(t.Partitions, p)
	}
	// The second partition carries an error and no records, and every
	// optional field of its version.
	p := &t.Partitions[1]
	p.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER
	p.Records = nil
	if v >= 4 {
		p.AbortedTransactions = []FetchAbortedTransaction{{ProducerID: 9000, FirstOffset: 950}, {ProducerID: 9001, FirstOffset: 960}}
	}
	if v >= 12 {
		p.DivergingEpoch = &FetchEpochEndOffset{Epoch: 3, EndOffset: 970}
		p.CurrentLeader = &LeaderIDAndEpoch{LeaderID: 2, LeaderEpoch: 6}
		p.SnapshotID = &FetchSnapshotID{EndOffset: 800, Epoch: 2}
	}
	r.Topics = []FetchResponseTopic{t}
	if v >= 16 {
		r.NodeEndpoints = []NodeEndpoint{
			{NodeID: 2, Host: "broker-2", Port: 9092, Rack: dpStr("us-east-1b")},
			{NodeID: 3, Host: "broker-3", Port: 9093},
		}
	}
	return r
}

func TestFetchRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(FetchRequest) }, func(v int16) (Request, Response) {
		return goldenFetchRequest(v), goldenFetchResponse(v, 3)
	})
	roundTrip(t, func() Request { return new(FetchRequest) }, func(v int16) (Request, Response) {
		r := goldenFetchResponse(v, 2)
		r.ErrorCode = 0
		if v >= 7 {
			r.ErrorCode = 71 // INVALID_FETCH_SESSION_EPOCH
		}
		r.Topics = nil
		return goldenFollowerFetchRequest(v), r
	})
}

// TestFetchResponseV11PreferredReadReplica decodes a v11 response written
// byte by byte from the spec: one topic, one partition whose preferred
// read replica is broker 2.
func TestFetchResponseV11PreferredReadReplica(t *testing.T) {
	records := []byte("RECORDS!")
	b := dpBE(
		int32(0),           // throttle_time_ms
		int16(0),           // error_code
		int32(123),         // session_id
		int32(1),           // [responses] length
		int16(6), "events", // topic
		int32(1),                     // [partitions] length
		int32(4),                     // partition_index
		int16(0),                     // error_code
		int64(5000),                  // high_watermark
		int64(4990),                  // last_stable_offset
		int64(17),                    // log_start_offset
		int32(-1),                    // aborted_transactions: null
		int32(2),                     // preferred_read_replica
		int32(len(records)), records, // records
	)
	want := &FetchResponse{SessionID: 123, Topics: []FetchResponseTopic{{
		Topic: "events",
		Partitions: []FetchResponsePartition{{
			PartitionIndex:       4,
			HighWatermark:        5000,
			LastStableOffset:     4990,
			LogStartOffset:       17,
			PreferredReadReplica: 2,
			Records:              records,
		}},
	}}}
	got := new(FetchResponse)
	dpCheck(t, b, 11, false, want, got)
	if got.Topics[0].Partitions[0].PreferredReadReplica != 2 {
		t.Fatalf("preferred read replica %d, want 2", got.Topics[0].Partitions[0].PreferredReadReplica)
	}
	// The records alias the input rather than being copied.
	if r := got.Topics[0].Partitions[0].Records; &r[0] != &b[len(b)-len(records)] {
		t.Error("records were copied, not aliased")
	}
}

// TestFetchResponseV16Tagged decodes a flexible response written by hand,
// with the partition tags (diverging epoch, current leader, snapshot id)
// and the top-level NodeEndpoints tag.
func TestFetchResponseV16Tagged(t *testing.T) {
	b := dpBE(
		int32(5), // throttle_time_ms
		int16(0), // error_code
		int32(0), // session_id
		byte(2),  // compact [responses]: 1 element
		dpTopicID,
		byte(2),                                         // compact [partitions]: 1 element
		int32(0),                                        // partition_index
		int16(6),                                        // error_code NOT_LEADER_OR_FOLLOWER
		int64(100),                                      // high_watermark
		int64(100),                                      // last_stable_offset
		int64(0),                                        // log_start_offset
		byte(0),                                         // aborted_transactions: null
		int32(-1),                                       // preferred_read_replica
		byte(1),                                         // records: empty
		byte(3),                                         // 3 tagged fields
		byte(0), byte(13), int32(7), int64(90), byte(0), // diverging epoch
		byte(1), byte(9), int32(3), int32(8), byte(0), // current leader
		byte(2), byte(13), int64(60), int32(1), byte(0), // snapshot id
		byte(0),           // topic tags
		byte(1),           // 1 top-level tagged field
		byte(0), byte(18), // tag 0, size 18: node endpoints
		byte(2), int32(3), byte(5), "host", int32(9092), byte(3), "r1", byte(0),
	)
	want := &FetchResponse{
		ThrottleTimeMs: 5,
		Topics: []FetchResponseTopic{{TopicID: dpTopicID, Partitions: []FetchResponsePartition{{
			ErrorCode:            6,
			HighWatermark:        100,
			LastStableOffset:     100,
			PreferredReadReplica: -1,
			Records:              []byte{},
			DivergingEpoch:       &FetchEpochEndOffset{Epoch: 7, EndOffset: 90},
			CurrentLeader:        &LeaderIDAndEpoch{LeaderID: 3, LeaderEpoch: 8},
			SnapshotID:           &FetchSnapshotID{EndOffset: 60, Epoch: 1},
		}}}},
		NodeEndpoints: []NodeEndpoint{{NodeID: 3, Host: "host", Port: 9092, Rack: dpStr("r1")}},
	}
	dpCheck(t, b, 16, true, want, new(FetchResponse))
}

// TestFetchRequestV11Bytes checks a consumer's v11 request against bytes
// laid out from the spec.
func TestFetchRequestV11Bytes(t *testing.T) {
	b := dpBE(
		int32(-1), int32(500), int32(1), int32(1<<20), // replica, max wait, min bytes, max bytes
		int8(1),             // isolation level
		int32(0), int32(-1), // session id, epoch
		int32(1), int16(1), "t", // topics: "t"
		int32(1), int32(2), int32(-1), int64(42), int64(-1), int32(65536), // partition 2
		int32(0),       // forgotten topics
		int16(2), "r1", // rack id
	)
	want := &FetchRequest{
		ReplicaID: -1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 1 << 20, IsolationLevel: 1, SessionEpoch: -1,
		Topics: []FetchRequestTopic{{Topic: "t", Partitions: []FetchRequestPartition{
			{Partition: 2, CurrentLeaderEpoch: -1, FetchOffset: 42, LogStartOffset: -1, PartitionMaxBytes: 65536},
		}}},
		RackID: "r1",
	}
	dpCheck(t, b, 11, false, want, new(FetchRequest))
}

// TestFetchRequestV15ReplicaState checks that a consumer sends no
// ReplicaState at v15+ and a follower does.
func TestFetchRequestV15ReplicaState(t *testing.T) {
	head := dpBE(
		int32(0), int32(0), int32(0), int8(0), // max wait, min bytes, max bytes, isolation
		int32(0), int32(0), // session id, epoch
		byte(1), byte(1), byte(1), // no topics, no forgotten topics, rack ""
	)
	consumer := dpBE(head, byte(0)) // no tagged fields
	dpCheck(t, consumer, 15, true, &FetchRequest{ReplicaID: -1, ReplicaEpoch: -1}, new(FetchRequest))

	follower := dpBE(head,
		byte(1),           // one tagged field
		byte(1), byte(13), // tag 1 (ReplicaState), 13 bytes
		int32(4), int64(99), byte(0),
	)
	dpCheck(t, follower, 15, true, &FetchRequest{ReplicaID: 4, ReplicaEpoch: 99}, new(FetchRequest))
}

func TestFetchPreferredReadReplicaAbsent(t *testing.T) {
	for v := int16(4); v <= 10; v++ {
		got := new(FetchResponse)
		frame := AppendResponse(nil, goldenFetchResponse(v, 2), v, false, 1)
		if err := DecodeResponse(frame[4:], got, v, false, 1); err != nil {
			t.Fatal(err)
		}
		for _, p := range got.Topics[0].Partitions {
			if p.PreferredReadReplica != -1 {
				t.Fatalf("v%d: preferred read replica %d without the field, want -1", v, p.PreferredReadReplica)
			}
		}
	}
	for v := int16(11); v <= new(FetchRequest).MaxVersion(); v++ {
		flexible := v >= 12
		got := new(FetchResponse)
		frame := AppendResponse(nil, goldenFetchResponse(v, 3), v, flexible, 1)
		if err := DecodeResponse(frame[4:], got, v, flexible, 1); err != nil {
			t.Fatal(err)
		}
		for i, p := range got.Topics[0].Partitions {
			if p.PreferredReadReplica != int32(i%3) {
				t.Fatalf("v%d: partition %d: preferred read replica %d, want %d", v, i, p.PreferredReadReplica, i%3)
			}
		}
	}
}

// TestFetchResponseTruncatedTag checks that a tagged struct cut short is an
// error, not a silent zero.
func TestFetchResponseTruncatedTag(t *testing.T) {
	b := dpBE(int32(0), int16(0), int32(0), byte(2), dpTopicID, byte(2),
		int32(0), int16(0), int64(0), int64(0), int64(0), byte(0), int32(-1), byte(0),
		byte(1), byte(1), byte(4), int32(3), // current leader: 4 of 9 bytes
		byte(0), byte(0))
	if err := new(FetchResponse).Decode(NewDecoder(b, true), 13); err == nil {
		t.Fatal("expected an error for a truncated CurrentLeader tag")
	}
}

func fetchFuzzVersions() []int16 { return []int16{4, 5, 7, 11, 12, 13, 16, 17} }

func FuzzFetchResponse(f *testing.F) {
	for _, v := range fetchFuzzVersions() {
		e := Encoder{Flexible: v >= 12}
		goldenFetchResponse(v, 3).Encode(&e, v)
		f.Add(e.B)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dpFuzzResponse(t, data, fetchFuzzVersions(), 12, func() Response { return new(FetchResponse) })
	})
}

func BenchmarkDecodeFetchResponse(b *testing.B) {
	for _, v := range []int16{11, 16} {
		b.Run(fmt.Sprintf("v%d/6partitions", v), func(b *testing.B) {
			flexible := v >= 12
			resp := goldenFetchResponse(v, 6)
			for i := range resp.Topics[0].Partitions {
				resp.Topics[0].Partitions[i].Records = bytes.Repeat([]byte{'x'}, 16<<10)
			}
			e := Encoder{Flexible: flexible}
			resp.Encode(&e, v)
			b.SetBytes(int64(len(e.B)))
			b.ReportAllocs()
			b.ResetTimer()
			var d Decoder
			for i := 0; i < b.N; i++ {
				var r FetchResponse
				d.Reset(e.B, flexible)
				if err := r.Decode(&d, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
