package protocol

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func adminStr(s string) *string { return &s }

// adminHex turns a byte listing into bytes: hex digit pairs, "quoted" ASCII
// and // comments to the end of the line; white space is ignored.
func adminHex(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	var digits strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				t.Fatalf("unterminated string in byte listing")
			}
			b, err := hex.DecodeString(digits.String())
			if err != nil {
				t.Fatalf("byte listing: %v", err)
			}
			out = append(out, b...)
			digits.Reset()
			out = append(out, s[i+1:i+1+j]...)
			i += j + 1
		case c == ' ' || c == '\n' || c == '\t':
		default:
			digits.WriteByte(c)
		}
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("byte listing: %v", err)
	}
	return append(out, b...)
}

// adminCheckBytes checks that want encodes to exactly b at version v and
// that b decodes into got as want, using every byte.
func adminCheckBytes(t *testing.T, b []byte, v int16, flexible bool, want, got Message) {
	t.Helper()
	e := Encoder{Flexible: flexible}
	want.Encode(&e, v)
	if !bytes.Equal(e.B, b) {
		t.Errorf("%T v%d encoding:\nwant %x\n got %x", want, v, b, e.B)
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
					{Name: "cleanup.policy", Value: adminStr("compact")},
					{Name: "retention.ms", Value: nil},
				},
			},
			{Name: "events", NumPartitions: 12, ReplicationFactor: 3},
		},
		TimeoutMs:    30000,
		ValidateOnly: true,
	}
	topic := CreateTopicsResponseTopic{Name: "orders", ErrorCode: 0}
	failed := CreateTopicsResponseTopic{Name: "events", ErrorCode: 36, ErrorMessage: adminStr("Topic 'events' already exists.")}
	if v >= 5 {
		topic.NumPartitions, topic.ReplicationFactor = 2, 3
		topic.Configs = []CreateTopicsResponseConfig{
			{Name: "cleanup.policy", Value: adminStr("compact"), ConfigSource: 1},
			{Name: "min.insync.replicas", Value: adminStr("2"), ReadOnly: true, ConfigSource: 5},
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
	req := adminHex(t, `
		00000001                   // topics
		0003 "foo"                 // name
		ffffffff ffff              // num partitions -1, replication factor -1
		00000001                   // assignments
		  00000000                 // partition 0
		  00000002 00000001 00000002 // broker ids 1, 2
		00000001                   // configs
		  000e "cleanup.policy" ffff // null value
		00007530                   // timeout 30000
		01                         // validate only
	`)
	adminCheckBytes(t, req, 2, false, &CreateTopicsRequest{
		Topics: []CreateTopicsRequestTopic{{
			Name: "foo", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: []CreateTopicsRequestAssignment{{PartitionIndex: 0, BrokerIDs: []int32{1, 2}}},
			Configs:     []CreateTopicsRequestConfig{{Name: "cleanup.policy"}},
		}},
		TimeoutMs: 30000, ValidateOnly: true,
	}, new(CreateTopicsRequest))

	resp := adminHex(t, `
		00000005                   // throttle
		03                         // topics: 2 (compact)
		04 "foo"
		0102030405060708090a0b0c0d0e0f10 // topic id
		0000 00                    // error code, null message
		00000003 0002              // partitions, replication factor
		02                         // configs: 1
		  0f "cleanup.policy" 08 "compact"
		  00 05 00                 // read only, source DEFAULT_CONFIG, sensitive
		  00                       // config tags
		00                         // topic tags
		04 "bar"
		aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
		0000 00
		00000001 0001
		00                         // null configs
		01 00 02 001d              // tag 0: topic config error 29
		00                         // top-level tags
	`)
	adminCheckBytes(t, resp, 7, true, &CreateTopicsResponse{
		ThrottleTimeMs: 5,
		Topics: []CreateTopicsResponseTopic{
			{
				Name: "foo", TopicID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
				NumPartitions: 3, ReplicationFactor: 2,
				Configs: []CreateTopicsResponseConfig{{Name: "cleanup.policy", Value: adminStr("compact"), ConfigSource: 5}},
			},
			{
				Name: "bar", TopicID: [16]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa},
				NumPartitions: 1, ReplicationFactor: 1, TopicConfigErrorCode: 29,
			},
		},
	}, new(CreateTopicsResponse))
}

func TestCreateTopicsBadConfigErrorTag(t *testing.T) {
	// Tag 0 must hold exactly an int16.
	b := adminHex(t, `00000000 02 04 "foo" 0000 00 ffffffff ffff 00 01 00 01 1d 00`)
	if err := new(CreateTopicsResponse).Decode(NewDecoder(b, true), 5); err == nil {
		t.Fatal("expected an error for a 1-byte topic config error code tag")
	}
}

// adminSamples builds sample messages of every admin API at a version.
var adminSamples = []struct {
	newReq func() Request
	build  func(v int16) (Request, Response)
}{
	{func() Request { return new(CreateTopicsRequest) }, createTopicsSample},
	{func() Request { return new(DeleteTopicsRequest) }, deleteTopicsSample},
	{func() Request { return new(CreatePartitionsRequest) }, createPartitionsSample},
	{func() Request { return new(ElectLeadersRequest) }, electLeadersSample},
	{func() Request { return new(AlterPartitionReassignmentsRequest) }, alterPartitionReassignmentsSample},
	{func() Request { return new(ListPartitionReassignmentsRequest) }, listPartitionReassignmentsSample},
	{func() Request { return new(DescribeConfigsRequest) }, describeConfigsSample},
	{func() Request { return new(InitProducerIdRequest) }, initProducerIdSample},
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
	for _, s := range adminSamples {
		proto := s.newReq()
		for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
			_, resp := s.build(v)
			e := Encoder{Flexible: IsFlexible(proto, v)}
			resp.Encode(&e, v)
			f.Add(e.B)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range adminSamples {
			proto := s.newReq()
			for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
				flexible := IsFlexible(proto, v)
				resp := proto.NewResponse()
				if resp.Decode(NewDecoder(b, flexible), v) != nil {
					continue
				}
				e := Encoder{Flexible: flexible}
				resp.Encode(&e, v)
				again := proto.NewResponse()
				if err := again.Decode(NewDecoder(e.B, flexible), v); err != nil {
					t.Fatalf("%s v%d: re-encoded response does not decode: %v", proto.Key(), v, err)
				}
				if !reflect.DeepEqual(resp, again) {
					t.Fatalf("%s v%d: re-encoding changed the response:\n%+v\n%+v", proto.Key(), v, resp, again)
				}
			}
		}
	})
}
