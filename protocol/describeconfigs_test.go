package protocol

import "testing"

func describeConfigsSample(v int16) (Request, Response) {
	req := &DescribeConfigsRequest{
		Resources: []DescribeConfigsRequestResource{
			{ResourceType: 2, ResourceName: "orders", ConfigurationKeys: []string{"cleanup.policy", "retention.ms"}},
			{ResourceType: 4, ResourceName: "1"}, // every key
		},
		IncludeSynonyms: true,
	}
	if v >= 3 {
		req.IncludeDocumentation = true
	}
	cfg := DescribeConfigsResponseConfig{
		Name: "cleanup.policy", Value: strp("compact"), ConfigSource: 1,
		Synonyms: []DescribeConfigsResponseSynonym{
			{Name: "cleanup.policy", Value: strp("compact"), Source: 1},
			{Name: "log.cleanup.policy", Value: strp("delete"), Source: 5},
		},
	}
	secret := DescribeConfigsResponseConfig{Name: "ssl.key.password", ReadOnly: true, ConfigSource: 4, IsSensitive: true}
	if v >= 3 {
		cfg.ConfigType, cfg.Documentation = 7, strp("The retention policy to use on old log segments.")
		secret.ConfigType = 9
	}
	resp := &DescribeConfigsResponse{
		ThrottleTimeMs: 8,
		Results: []DescribeConfigsResponseResult{
			{ResourceType: 2, ResourceName: "orders", Configs: []DescribeConfigsResponseConfig{cfg}},
			{ResourceType: 4, ResourceName: "1", Configs: []DescribeConfigsResponseConfig{secret}},
			{ErrorCode: 29, ErrorMessage: strp("denied"), ResourceType: 2, ResourceName: "secret"},
		},
	}
	return req, resp
}

func TestDescribeConfigsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DescribeConfigsRequest) }, describeConfigsSample)
}

func TestDescribeConfigsBytes(t *testing.T) {
	checkBytes(t, wire(
		int32(1), byte(2), int16(3), "foo", int32(-1), // topic foo, null keys: all
		byte(1), // include synonyms
	), 1, false, &DescribeConfigsRequest{
		Resources:       []DescribeConfigsRequestResource{{ResourceType: 2, ResourceName: "foo"}},
		IncludeSynonyms: true,
	})

	checkBytes(t, wire(
		int32(0), // throttle
		int32(1), int16(0), int16(-1), byte(2), int16(3), "foo",
		int32(1), // configs
		int16(14), "cleanup.policy", int16(7), "compact",
		byte(0), byte(1), byte(0), // read only, DYNAMIC_TOPIC_CONFIG, sensitive
		int32(2), // synonyms
		int16(14), "cleanup.policy", int16(7), "compact", byte(1),
		int16(18), "log.cleanup.policy", int16(6), "delete", byte(5),
	), 1, false, &DescribeConfigsResponse{
		Results: []DescribeConfigsResponseResult{{ResourceType: 2, ResourceName: "foo", Configs: []DescribeConfigsResponseConfig{{
			Name: "cleanup.policy", Value: strp("compact"), ConfigSource: 1,
			Synonyms: []DescribeConfigsResponseSynonym{
				{Name: "cleanup.policy", Value: strp("compact"), Source: 1},
				{Name: "log.cleanup.policy", Value: strp("delete"), Source: 5},
			},
		}}}},
	})

	checkBytes(t, wire(
		int32(0),
		byte(2), int16(0), byte(0), byte(4), byte(2), "1", // broker 1
		byte(2), byte(17), "ssl.key.password", byte(0), // null value
		byte(1), byte(4), byte(1), // read only, STATIC_BROKER_CONFIG, sensitive
		byte(1),                 // no synonyms
		byte(9), byte(4), "doc", // PASSWORD, documentation
		byte(0),
		byte(0),
		byte(0),
	), 4, true, &DescribeConfigsResponse{
		Results: []DescribeConfigsResponseResult{{ResourceType: 4, ResourceName: "1", Configs: []DescribeConfigsResponseConfig{{
			Name: "ssl.key.password", ReadOnly: true, ConfigSource: 4, IsSensitive: true,
			ConfigType: 9, Documentation: strp("doc"),
		}}}},
	})
}
