package protocol

import (
	"reflect"
	"testing"
)

func incrementalAlterConfigsSample(v int16) (Request, Response) {
	req := &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{
			{ResourceType: 2, ResourceName: "orders", Configs: []IncrementalAlterConfigsRequestConfig{
				{Name: "retention.ms", ConfigOperation: ConfigOperationSet, Value: strp("3600000")},
				{Name: "cleanup.policy", ConfigOperation: ConfigOperationDelete},
				{Name: "leader.replication.throttled.replicas", ConfigOperation: ConfigOperationAppend, Value: strp("0:1")},
			}},
			{ResourceType: 4, ResourceName: "2", Configs: []IncrementalAlterConfigsRequestConfig{
				{Name: "log.cleaner.threads", ConfigOperation: ConfigOperationSubtract, Value: strp("2")},
			}},
		},
		ValidateOnly: true,
	}
	resp := &IncrementalAlterConfigsResponse{
		ThrottleTimeMs: 9,
		Responses: []AlterConfigsResponseResource{
			{ResourceType: 2, ResourceName: "orders"},
			{ErrorCode: 42, ErrorMessage: strp("invalid request"), ResourceType: 4, ResourceName: "2"},
		},
	}
	return req, resp
}

func TestIncrementalAlterConfigsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(IncrementalAlterConfigsRequest) }, incrementalAlterConfigsSample)
}

func TestIncrementalAlterConfigsBytes(t *testing.T) {
	checkBytes(t, wire(
		int32(1),                 // resources
		byte(2), int16(3), "foo", // topic foo
		int32(2),                                             // configs
		int16(12), "retention.ms", byte(0), int16(4), "1000", // SET 1000
		int16(14), "cleanup.policy", byte(1), int16(-1), // DELETE, null
		byte(0), // validate only
	), 0, false, &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "foo", Configs: []IncrementalAlterConfigsRequestConfig{
			{Name: "retention.ms", ConfigOperation: ConfigOperationSet, Value: strp("1000")},
			{Name: "cleanup.policy", ConfigOperation: ConfigOperationDelete},
		}}},
	})

	checkBytes(t, wire(
		byte(2),               // 1 resource
		byte(4), byte(2), "1", // broker 1
		byte(2),                                                         // 1 config
		byte(20), "log.cleaner.threads", byte(0), byte(2), "2", byte(0), // SET "2", tags
		byte(0),          // resource tags
		byte(0), byte(0), // validate only, tags
	), 1, true, &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{{ResourceType: 4, ResourceName: "1", Configs: []IncrementalAlterConfigsRequestConfig{
			{Name: "log.cleaner.threads", Value: strp("2")},
		}}},
	})

	checkBytes(t, wire(
		int32(5), // throttle
		byte(3),
		int16(0), byte(0), byte(2), byte(4), "foo", byte(0),
		int16(40), byte(4), "bad", byte(4), byte(2), "1", byte(0),
		byte(0),
	), 1, true, &IncrementalAlterConfigsResponse{
		ThrottleTimeMs: 5,
		Responses: []AlterConfigsResponseResource{
			{ResourceType: 2, ResourceName: "foo"},
			{ErrorCode: 40, ErrorMessage: strp("bad"), ResourceType: 4, ResourceName: "1"},
		},
	})
}

func TestConfigAdminRegistered(t *testing.T) {
	for _, s := range configAdminSamples {
		k := s.newReq().Key()
		if r := NewRequest(k); r == nil || reflect.TypeOf(r) != reflect.TypeOf(s.newReq()) {
			t.Errorf("%s is not registered", k)
		}
	}
	if got := IncrementalAlterConfigs.String(); got != "IncrementalAlterConfigs" {
		t.Errorf("api key 44 is named %q", got)
	}
	if got := Implemented()[IncrementalAlterConfigs]; got != (VersionRange{0, 1}) {
		t.Errorf("IncrementalAlterConfigs implemented as %v", got)
	}
}
