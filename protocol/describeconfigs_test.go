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
		Name: "cleanup.policy", Value: adminStr("compact"), ConfigSource: 1,
		Synonyms: []DescribeConfigsResponseSynonym{
			{Name: "cleanup.policy", Value: adminStr("compact"), Source: 1},
			{Name: "log.cleanup.policy", Value: adminStr("delete"), Source: 5},
		},
	}
	secret := DescribeConfigsResponseConfig{Name: "ssl.key.password", ReadOnly: true, ConfigSource: 4, IsSensitive: true}
	if v >= 3 {
		cfg.ConfigType, cfg.Documentation = 7, adminStr("The retention policy to use on old log segments.")
		secret.ConfigType = 9
	}
	resp := &DescribeConfigsResponse{
		ThrottleTimeMs: 8,
		Results: []DescribeConfigsResponseResult{
			{ResourceType: 2, ResourceName: "orders", Configs: []DescribeConfigsResponseConfig{cfg}},
			{ResourceType: 4, ResourceName: "1", Configs: []DescribeConfigsResponseConfig{secret}},
			{ErrorCode: 29, ErrorMessage: adminStr("denied"), ResourceType: 2, ResourceName: "secret"},
		},
	}
	return req, resp
}

func TestDescribeConfigsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DescribeConfigsRequest) }, describeConfigsSample)
}

func TestDescribeConfigsBytes(t *testing.T) {
	adminCheckBytes(t, adminHex(t, `
		00000001 02 0003 "foo" ffffffff // topic foo, null keys: all
		01                              // include synonyms
	`), 1, false, &DescribeConfigsRequest{
		Resources:       []DescribeConfigsRequestResource{{ResourceType: 2, ResourceName: "foo"}},
		IncludeSynonyms: true,
	}, new(DescribeConfigsRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000                        // throttle
		00000001 0000 ffff 02 0003 "foo"
		00000001                        // configs
		  000e "cleanup.policy" 0007 "compact"
		  00 01 00                      // read only, DYNAMIC_TOPIC_CONFIG, sensitive
		  00000002                      // synonyms
		    000e "cleanup.policy" 0007 "compact" 01
		    0012 "log.cleanup.policy" 0006 "delete" 05
	`), 1, false, &DescribeConfigsResponse{
		Results: []DescribeConfigsResponseResult{{ResourceType: 2, ResourceName: "foo", Configs: []DescribeConfigsResponseConfig{{
			Name: "cleanup.policy", Value: adminStr("compact"), ConfigSource: 1,
			Synonyms: []DescribeConfigsResponseSynonym{
				{Name: "cleanup.policy", Value: adminStr("compact"), Source: 1},
				{Name: "log.cleanup.policy", Value: adminStr("delete"), Source: 5},
			},
		}}}},
	}, new(DescribeConfigsResponse))

	adminCheckBytes(t, adminHex(t, `
		00000000
		02 0000 00 04 02 "1"            // broker 1
		02 11 "ssl.key.password" 00     // null value
		  01 04 01                      // read only, STATIC_BROKER_CONFIG, sensitive
		  01                            // no synonyms
		  09 04 "doc"                   // PASSWORD, documentation
		  00
		00
		00
	`), 4, true, &DescribeConfigsResponse{
		Results: []DescribeConfigsResponseResult{{ResourceType: 4, ResourceName: "1", Configs: []DescribeConfigsResponseConfig{{
			Name: "ssl.key.password", ReadOnly: true, ConfigSource: 4, IsSensitive: true,
			ConfigType: 9, Documentation: adminStr("doc"),
		}}}},
	}, new(DescribeConfigsResponse))
}
