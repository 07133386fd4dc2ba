package protocol

import (
	"bytes"
	"fmt"
	"testing"
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
		t.TopicID = testTopicID
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
			f.TopicID = testTopicID2
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
		r.ClusterID = strp("cluster-x")
	}
	if v >= 17 {
		r.Topics[0].Partitions[1].ReplicaDirectoryID = testTopicID2
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
		t.TopicID = testTopicID
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
			{NodeID: 2, Host: "broker-2", Port: 9092, Rack: strp("us-east-1b")},
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
	b := wire(
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
	got := checkBytes(t, b, 11, false, want).(*FetchResponse)
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
	b := wire(
		int32(5), // throttle_time_ms
		int16(0), // error_code
		int32(0), // session_id
		byte(2),  // compact [responses]: 1 element
		testTopicID,
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
		Topics: []FetchResponseTopic{{TopicID: testTopicID, Partitions: []FetchResponsePartition{{
			ErrorCode:            6,
			HighWatermark:        100,
			LastStableOffset:     100,
			PreferredReadReplica: -1,
			Records:              []byte{},
			DivergingEpoch:       &FetchEpochEndOffset{Epoch: 7, EndOffset: 90},
			CurrentLeader:        &LeaderIDAndEpoch{LeaderID: 3, LeaderEpoch: 8},
			SnapshotID:           &FetchSnapshotID{EndOffset: 60, Epoch: 1},
		}}}},
		NodeEndpoints: []NodeEndpoint{{NodeID: 3, Host: "host", Port: 9092, Rack: strp("r1")}},
	}
	checkBytes(t, b, 16, true, want)
}

// TestFetchRequestV11Bytes checks a consumer's v11 request against bytes
// laid out from the spec.
func TestFetchRequestV11Bytes(t *testing.T) {
	b := wire(
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
	checkBytes(t, b, 11, false, want)
}

// TestFetchRequestV15ReplicaState checks that a consumer sends no
// ReplicaState at v15+ and a follower does.
func TestFetchRequestV15ReplicaState(t *testing.T) {
	head := wire(
		int32(0), int32(0), int32(0), int8(0), // max wait, min bytes, max bytes, isolation
		int32(0), int32(0), // session id, epoch
		byte(1), byte(1), byte(1), // no topics, no forgotten topics, rack ""
	)
	consumer := wire(head, byte(0)) // no tagged fields
	checkBytes(t, consumer, 15, true, &FetchRequest{ReplicaID: -1, ReplicaEpoch: -1})

	follower := wire(head,
		byte(1),           // one tagged field
		byte(1), byte(13), // tag 1 (ReplicaState), 13 bytes
		int32(4), int64(99), byte(0),
	)
	checkBytes(t, follower, 15, true, &FetchRequest{ReplicaID: 4, ReplicaEpoch: 99})
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
	b := wire(int32(0), int16(0), int32(0), byte(2), testTopicID, byte(2),
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
		f.Add(encoded(goldenFetchResponse(v, 3), v, v >= 12))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range fetchFuzzVersions() {
			fuzzReencode(t, data, v, v >= 12, func() Message { return new(FetchResponse) })
		}
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
