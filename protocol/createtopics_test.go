package protocol

import (
	"reflect"
	"testing"
)

func createTopicsSample(v int16) (Request, Response) {
	req := &CreateTopicsRequest{
		Topics: []CreateTopicsRequestTopic{
			{
				Name: "orders", NumPartitions: -1, ReplicationFactor: -1,
				Assignments: []CreateTopicsRequestAssignment{
					{PartitionIndex: 0, BrokerIDs: []int32{1, 2, 3}},
					{PartitionIndex: 1, BrokerIDs: []int32{2, 3, 1}},
				},
				Configs: []CreateTopicsRequestConfig{
					{Name: "cleanup.policy", Value: strp("compact")},
					{Name: "retention.ms", Value: nil},
				},
			},
			{Name: "events", NumPartitions: 12, ReplicationFactor: 3},
		},
		TimeoutMs:    30000,
		ValidateOnly: true,
	}
	topic := CreateTopicsResponseTopic{Name: "orders", ErrorCode: 0}
	failed := CreateTopicsResponseTopic{Name: "events", ErrorCode: 36, ErrorMessage: strp("Topic 'events' already exists.")}
	if v >= 5 {
		topic.NumPartitions, topic.ReplicationFactor = 2, 3
		topic.Configs = []CreateTopicsResponseConfig{
			{Name: "cleanup.policy", Value: strp("compact"), ConfigSource: 1},
			{Name: "min.insync.replicas", Value: strp("2"), ReadOnly: true, ConfigSource: 5},
			{Name: "sasl.jaas.config", Value: nil, ConfigSource: 4, IsSensitive: true},
		}
		failed.NumPartitions, failed.ReplicationFactor = -1, -1
		failed.TopicConfigErrorCode = 29
	}
	if v >= 7 {
		topic.TopicID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	}
	resp := &CreateTopicsResponse{ThrottleTimeMs: 10, Topics: []CreateTopicsResponseTopic{topic, failed}}
	return req, resp
}

func TestCreateTopicsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(CreateTopicsRequest) }, createTopicsSample)
}

func TestCreateTopicsBytes(t *testing.T) {
	req := wire(
		int32(1),        // topics
		int16(3), "foo", // name
		int32(-1), int16(-1), // num partitions -1, replication factor -1
		int32(1),                     // assignments
		int32(0),                     // partition 0
		int32(2), int32(1), int32(2), // broker ids 1, 2
		int32(1),                               // configs
		int16(14), "cleanup.policy", int16(-1), // null value
		int32(30000), // timeout 30000
		byte(1),      // validate only
	)
	checkBytes(t, req, 2, false, &CreateTopicsRequest{
		Topics: []CreateTopicsRequestTopic{{
			Name: "foo", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: []CreateTopicsRequestAssignment{{PartitionIndex: 0, BrokerIDs: []int32{1, 2}}},
			Configs:     []CreateTopicsRequestConfig{{Name: "cleanup.policy"}},
		}},
		TimeoutMs: 30000, ValidateOnly: true,
	})

	resp := wire(
		int32(5), // throttle
		byte(3),  // topics: 2 (compact)
		byte(4), "foo",
		[16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, // topic id
		int16(0), byte(0), // error code, null message
		int32(3), int16(2), // partitions, replication factor
		byte(2), // configs: 1
		byte(15), "cleanup.policy", byte(8), "compact",
		byte(0), byte(5), byte(0), // read only, source DEFAULT_CONFIG, sensitive
		byte(0), // config tags
		byte(0), // topic tags
		byte(4), "bar",
		[16]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa},
		int16(0), byte(0),
		int32(1), int16(1),
		byte(0),                              // null configs
		byte(1), byte(0), byte(2), int16(29), // tag 0: topic config error 29
		byte(0), // top-level tags
	)
	checkBytes(t, resp, 7, true, &CreateTopicsResponse{
		ThrottleTimeMs: 5,
		Topics: []CreateTopicsResponseTopic{
			{
				Name: "foo", TopicID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
				NumPartitions: 3, ReplicationFactor: 2,
				Configs: []CreateTopicsResponseConfig{{Name: "cleanup.policy", Value: strp("compact"), ConfigSource: 5}},
			},
			{
				Name: "bar", TopicID: [16]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa},
				NumPartitions: 1, ReplicationFactor: 1, TopicConfigErrorCode: 29,
			},
		},
	})
}

func TestCreateTopicsBadConfigErrorTag(t *testing.T) {
	// Tag 0 must hold exactly an int16.
	b := wire(
		int32(0), byte(2), // throttle, 1 topic
		byte(4), "foo", int16(0), byte(0), // name, error code, null message
		int32(-1), int16(-1), byte(0), // partitions, replication factor, null configs
		byte(1), byte(0), byte(1), byte(29), // tag 0 of 1 byte
		byte(0),
	)
	if err := new(CreateTopicsResponse).Decode(NewDecoder(b, true), 5); err == nil {
		t.Fatal("expected an error for a 1-byte topic config error code tag")
	}
}

// adminSamples builds sample messages of every admin API at a version.
var adminSamples = []sample{
	{"CreateTopics", func() Request { return new(CreateTopicsRequest) }, createTopicsSample},
	{"DeleteTopics", func() Request { return new(DeleteTopicsRequest) }, deleteTopicsSample},
	{"CreatePartitions", func() Request { return new(CreatePartitionsRequest) }, createPartitionsSample},
	{"ElectLeaders", func() Request { return new(ElectLeadersRequest) }, electLeadersSample},
	{"AlterPartitionReassignments", func() Request { return new(AlterPartitionReassignmentsRequest) }, alterPartitionReassignmentsSample},
	{"ListPartitionReassignments", func() Request { return new(ListPartitionReassignmentsRequest) }, listPartitionReassignmentsSample},
	{"DescribeConfigs", func() Request { return new(DescribeConfigsRequest) }, describeConfigsSample},
	{"InitProducerId", func() Request { return new(InitProducerIdRequest) }, initProducerIdSample},
}

func TestAdminRegistered(t *testing.T) {
	for _, s := range adminSamples {
		k := s.newReq().Key()
		if r := NewRequest(k); r == nil || reflect.TypeOf(r) != reflect.TypeOf(s.newReq()) {
			t.Errorf("%s is not registered", k)
		}
	}
}

// FuzzAdminResponses decodes arbitrary bytes as every admin response at
// every implemented version. Decoding must not panic, and whatever decodes
// must encode and decode again to the same value.
func FuzzAdminResponses(f *testing.F) {
	seedSamples(f, adminSamples, false)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzSamples(t, data, adminSamples, false) })
}
