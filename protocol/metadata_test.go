package protocol

import (
	"bytes"
	"testing"
)

func goldenMetadataRequest(v int16) *MetadataRequest {
	r := &MetadataRequest{Topics: []MetadataRequestTopic{{Name: "events"}, {Name: "logs"}}}
	if v >= 10 {
		r.Topics[0].TopicID = testTopicID
	}
	if v >= 12 {
		r.Topics[1] = MetadataRequestTopic{TopicID: testTopicID2} // by id only: null name
	}
	if v >= 4 {
		r.AllowAutoTopicCreation = true
	}
	if v >= 8 {
		r.IncludeTopicAuthorizedOperations = true
		if v <= 10 {
			r.IncludeClusterAuthorizedOperations = true
		}
	}
	return r
}

func goldenMetadataResponse(v int16) *MetadataResponse {
	r := &MetadataResponse{
		Brokers: []MetadataResponseBroker{
			{NodeID: 1, Host: "broker-1", Port: 9092},
			{NodeID: 2, Host: "broker-2", Port: 9093},
		},
	}
	if v >= 1 {
		r.Brokers[0].Rack = strp("us-east-1a")
		r.ControllerID = 2
	}
	if v >= 2 {
		r.ClusterID = strp("cluster-x")
	}
	if v >= 3 {
		r.ThrottleTimeMs = 15
	}
	if v >= 8 && v <= 10 {
		r.ClusterAuthorizedOperations = 0x0ff8
	}
	t := MetadataResponseTopic{
		Name: "events",
		Partitions: []MetadataResponsePartition{
			{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{1, 2}},
			{ErrorCode: 5, PartitionIndex: 1, LeaderID: -1, ReplicaNodes: []int32{2, 1}, IsrNodes: []int32{1}},
		},
	}
	if v >= 1 {
		t.IsInternal = true
	}
	if v >= 5 {
		t.Partitions[1].OfflineReplicas = []int32{2}
	}
	if v >= 7 {
		t.Partitions[0].LeaderEpoch = 7
		t.Partitions[1].LeaderEpoch = -1
	}
	if v >= 8 {
		t.TopicAuthorizedOperations = 0x0bf8
	}
	if v >= 10 {
		t.TopicID = testTopicID
	}
	r.Topics = []MetadataResponseTopic{t, {ErrorCode: 3, Name: "missing"}}
	if v >= 12 {
		// a topic asked by id that does not exist: null name
		r.Topics[1] = MetadataResponseTopic{ErrorCode: 100, TopicID: testTopicID2}
	}
	return r
}

func TestMetadataRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(MetadataRequest) }, func(v int16) (Request, Response) {
		return goldenMetadataRequest(v), goldenMetadataResponse(v)
	})
	// All topics (null array) and no topics (empty array).
	roundTrip(t, func() Request { return new(MetadataRequest) }, func(v int16) (Request, Response) {
		return &MetadataRequest{}, &MetadataResponse{}
	})
	roundTrip(t, func() Request { return new(MetadataRequest) }, func(v int16) (Request, Response) {
		return &MetadataRequest{Topics: []MetadataRequestTopic{}}, &MetadataResponse{}
	})
}

// TestMetadataRequestAllTopics checks the bytes of "all topics" (null
// array) and "no topics" (empty array) in both array forms.
func TestMetadataRequestAllTopics(t *testing.T) {
	checkBytes(t, wire(int32(-1)), 1, false, &MetadataRequest{})
	checkBytes(t, wire(int32(0)), 1, false, &MetadataRequest{Topics: []MetadataRequestTopic{}})
	// v9: compact array (0 = null, 1 = empty), auto-create, topic ops, tags.
	checkBytes(t, wire(byte(0), byte(1), byte(0), byte(0), byte(0)), 9, true,
		&MetadataRequest{AllowAutoTopicCreation: true})
	checkBytes(t, wire(byte(1), byte(0), byte(0), byte(0), byte(0)), 9, true,
		&MetadataRequest{Topics: []MetadataRequestTopic{}})

	var got MetadataRequest
	if err := got.Decode(NewDecoder(wire(int32(-1)), false), 1); err != nil || got.Topics != nil {
		t.Fatalf("null array: topics %#v, err %v; want nil", got.Topics, err)
	}
	if err := got.Decode(NewDecoder(wire(int32(0)), false), 1); err != nil || got.Topics == nil {
		t.Fatalf("empty array: topics %#v, err %v; want empty non-nil", got.Topics, err)
	}
}

// TestMetadataRequestV12Bytes checks a v12 request asking for one topic by
// name and one by id (null name).
func TestMetadataRequestV12Bytes(t *testing.T) {
	b := wire(
		byte(3),                           // compact array of 2
		[16]byte{}, byte(2), "t", byte(0), // zero id, name "t", tags
		testTopicID, byte(0), byte(0), // id, null name, tags
		byte(1), // allow auto topic creation
		byte(0), // include topic authorized operations
		byte(0), // tags
	)
	want := &MetadataRequest{
		Topics:                 []MetadataRequestTopic{{Name: "t"}, {TopicID: testTopicID}},
		AllowAutoTopicCreation: true,
	}
	checkBytes(t, b, 12, true, want)
}

// TestMetadataResponseV1Bytes decodes a v1 response laid out from the spec.
func TestMetadataResponseV1Bytes(t *testing.T) {
	b := wire(
		int32(1),                                                // brokers
		int32(3), int16(4), "host", int32(9092), int16(2), "r1", // node 3, rack r1
		int32(3),                // controller id
		int32(1),                // topics
		int16(0), int16(1), "t", // error code, name
		byte(0),                      // is_internal
		int32(1),                     // partitions
		int16(0), int32(0), int32(3), // error, index, leader
		int32(1), int32(3), // replicas [3]
		int32(1), int32(3), // isr [3]
	)
	want := &MetadataResponse{
		Brokers:      []MetadataResponseBroker{{NodeID: 3, Host: "host", Port: 9092, Rack: strp("r1")}},
		ControllerID: 3,
		Topics: []MetadataResponseTopic{{Name: "t", Partitions: []MetadataResponsePartition{
			{LeaderID: 3, ReplicaNodes: []int32{3}, IsrNodes: []int32{3}},
		}}},
	}
	checkBytes(t, b, 1, false, want)
}

// TestMetadataResponseV12Bytes decodes a flexible response by hand.
func TestMetadataResponseV12Bytes(t *testing.T) {
	b := wire(
		int32(0),                                              // throttle
		byte(2),                                               // brokers: 1
		int32(1), byte(2), "h", int32(9092), byte(0), byte(0), // null rack, tags
		byte(4), "abc", // cluster id
		int32(1), // controller id
		byte(2),  // topics: 1
		int16(0), byte(2), "t", testTopicID, byte(0),
		byte(2),                                // partitions: 1
		int16(0), int32(2), int32(1), int32(9), // error, index, leader, epoch
		byte(3), int32(1), int32(2), byte(2), int32(1), // replicas [1 2], isr [1]
		byte(1), byte(0), // offline [], tags
		int32(-2147483648), byte(0), // topic authorized operations, tags
		byte(0), // tags
	)
	want := &MetadataResponse{
		Brokers:      []MetadataResponseBroker{{NodeID: 1, Host: "h", Port: 9092}},
		ClusterID:    strp("abc"),
		ControllerID: 1,
		Topics: []MetadataResponseTopic{{
			Name: "t", TopicID: testTopicID,
			Partitions: []MetadataResponsePartition{
				{PartitionIndex: 2, LeaderID: 1, LeaderEpoch: 9, ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{1}},
			},
			TopicAuthorizedOperations: -2147483648,
		}},
	}
	checkBytes(t, b, 12, true, want)
}

func TestMetadataHostileInt32Array(t *testing.T) {
	// A replica array claiming 8 elements with 8 bytes left must fail.
	b := wire(int32(0), int32(0), int32(1), int16(0), int16(1), "t", byte(0),
		int32(1), int16(0), int32(0), int32(0), int32(8), int32(1), int32(2))
	if err := new(MetadataResponse).Decode(NewDecoder(b, false), 1); err == nil {
		t.Fatal("expected an error")
	}
}

func metadataFuzzVersions() []int16 { return []int16{1, 3, 5, 7, 8, 9, 10, 12} }

func FuzzMetadataResponse(f *testing.F) {
	for _, v := range metadataFuzzVersions() {
		f.Add(encoded(goldenMetadataResponse(v), v, v >= 9))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range metadataFuzzVersions() {
			fuzzReencode(t, data, v, v >= 9, func() Message { return new(MetadataResponse) })
		}
	})
}

func TestMetadataResponseNullName(t *testing.T) {
	// v12+: a topic without a name is written with a null name.
	got := encoded(&MetadataResponse{Topics: []MetadataResponseTopic{{ErrorCode: 100}}}, 12, true)
	want := wire(int32(0), byte(1), byte(0), int32(0), byte(2), int16(100), byte(0), [16]byte{},
		byte(0), byte(1), int32(0), byte(0), byte(0))
	if !bytes.Equal(got, want) {
		t.Fatalf("\nwant % x\n got % x", want, got)
	}
}
