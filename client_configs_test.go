package kafka

// Unit tests of the Client's config requests on the fake broker: broker
// resources reach the broker they name, the others the controller, and
// the answers come back in the request's order with each resource's error
// mapped to a kafka.Error.

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientAdminConfigsAnswer makes every broker answer DescribeConfigs by
// echoing the resources it was asked for, each with one entry saying which
// broker answered; it records which broker got which resources.
func clientAdminConfigsAnswer(fc *fakebroker.Cluster) *clientAdminRouting {
	rt := &clientAdminRouting{got: map[int32][]string{}}
	for _, b := range fc.Brokers() {
		id := b.ID()
		b.Handle(protocol.DescribeConfigs, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			r := req.(*protocol.DescribeConfigsRequest)
			resp := &protocol.DescribeConfigsResponse{ThrottleTimeMs: 10 * id}
			for _, res := range r.Resources {
				rt.add(id, res.ResourceType, res.ResourceName)
				resp.Results = append(resp.Results, protocol.DescribeConfigsResponseResult{
					ResourceType: res.ResourceType, ResourceName: res.ResourceName,
					Configs: []protocol.DescribeConfigsResponseConfig{{Name: "answered.by", Value: clientAdminStr(strconv.Itoa(int(id)))}},
				})
			}
			return resp, fakebroker.Action{}
		})
	}
	return rt
}

// clientAdminRouting records which broker received which resources, as
// "type:name".
type clientAdminRouting struct {
	mu  sync.Mutex
	got map[int32][]string
}

func (r *clientAdminRouting) add(id int32, typ int8, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[id] = append(r.got[id], strconv.Itoa(int(typ))+":"+name)
}

func (r *clientAdminRouting) check(t *testing.T, want map[int32][]string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !reflect.DeepEqual(r.got, want) {
		t.Errorf("resources by broker = %v, want %v", r.got, want)
	}
}

func TestClientAdminDescribeConfigsRouting(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	routing := clientAdminConfigsAnswer(fc)
	resp, err := client.DescribeConfigs(clientAdminCtx(t), &DescribeConfigsRequest{Resources: []DescribeConfigRequestResource{
		{ResourceType: ResourceTypeTopic, ResourceName: "a"},
		{ResourceType: ResourceTypeBroker, ResourceName: "2"},
		{ResourceType: ResourceTypeBroker, ResourceName: ""}, // cluster-wide broker defaults: any broker
		{ResourceType: ResourceType(8), ResourceName: "1"},   // broker 1's loggers
		{ResourceType: ResourceTypeTopic, ResourceName: "b"},
		{ResourceType: ResourceTypeBroker, ResourceName: "3"}, // the controller's own
	}})
	if err != nil {
		t.Fatal(err)
	}
	routing.check(t, map[int32][]string{
		1: {"8:1"},
		2: {"4:2"},
		3: {"2:a", "4:", "2:b", "4:3"},
	})
	// One request per broker, answers in the request's order.
	for id, n := range map[int32]int{1: 1, 2: 1, 3: 1} {
		if got := fc.Broker(id).Requests(protocol.DescribeConfigs); got != n {
			t.Errorf("broker %d received %d DescribeConfigs requests, want %d", id, got, n)
		}
	}
	var got []string
	for _, r := range resp.Resources {
		got = append(got, strconv.Itoa(int(r.ResourceType))+":"+r.ResourceName+"@"+r.ConfigEntries[0].ConfigValue)
	}
	want := []string{"2:a@3", "4:2@2", "4:@3", "8:1@1", "2:b@3", "4:3@3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
	}
	if resp.Throttle != 30*time.Millisecond {
		t.Errorf("Throttle = %v, want the longest, 30ms", resp.Throttle)
	}
}

func TestClientAdminDescribeConfigsFields(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	clientAdminAnswer(t, fc, clientAdminController, protocol.DescribeConfigs, func(req protocol.Request) protocol.Response {
		return &protocol.DescribeConfigsResponse{Results: []protocol.DescribeConfigsResponseResult{
			{ResourceType: 2, ResourceName: "orders", Configs: []protocol.DescribeConfigsResponseConfig{
				{
					Name: "retention.ms", Value: clientAdminStr("60000"), ConfigSource: 1,
					Synonyms: []protocol.DescribeConfigsResponseSynonym{
						{Name: "retention.ms", Value: clientAdminStr("60000"), Source: 1},
						{Name: "log.retention.ms", Value: nil, Source: 5},
					},
					ConfigType: 5, Documentation: clientAdminStr("How long to keep a log."),
				},
				{Name: "ssl.key.password", ReadOnly: true, IsSensitive: true, ConfigSource: 4},
			}},
			{ErrorCode: 3, ErrorMessage: clientAdminStr("Topic gone does not exist"), ResourceType: 2, ResourceName: "gone"},
		}}
	})
	resp, err := client.DescribeConfigs(clientAdminCtx(t), &DescribeConfigsRequest{
		Resources: []DescribeConfigRequestResource{
			{ResourceType: ResourceTypeTopic, ResourceName: "orders", ConfigNames: []string{"retention.ms", "ssl.key.password"}},
			{ResourceType: ResourceTypeTopic, ResourceName: "gone"},
		},
		IncludeSynonyms:      true,
		IncludeDocumentation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantOrders := DescribeConfigResponseResource{
		ResourceType: 2, ResourceName: "orders",
		ConfigEntries: []DescribeConfigResponseConfigEntry{
			{
				ConfigName: "retention.ms", ConfigValue: "60000", ConfigSource: 1,
				ConfigSynonyms: []DescribeConfigResponseConfigSynonym{
					{ConfigName: "retention.ms", ConfigValue: "60000", ConfigSource: 1},
					{ConfigName: "log.retention.ms", ConfigSource: 5},
				},
				ConfigType: 5, ConfigDocumentation: "How long to keep a log.",
			},
			{ConfigName: "ssl.key.password", ReadOnly: true, IsSensitive: true, ConfigSource: 4, ConfigSynonyms: []DescribeConfigResponseConfigSynonym{}},
		},
	}
	if len(resp.Resources) != 2 || !reflect.DeepEqual(resp.Resources[0], wantOrders) {
		t.Fatalf("resources = %+v, want first %+v", resp.Resources, wantOrders)
	}
	gone := resp.Resources[1]
	if !errors.Is(gone.Error, UnknownTopicOrPartition) || !strings.Contains(gone.Error.Error(), "does not exist") || len(gone.ConfigEntries) != 0 {
		t.Errorf("gone = %+v, want UnknownTopicOrPartition with the broker's message", gone)
	}

	got := clientAdminOnly(t, fc, clientAdminController, protocol.DescribeConfigs, 1)[0].(*protocol.DescribeConfigsRequest)
	want := &protocol.DescribeConfigsRequest{
		Resources: []protocol.DescribeConfigsRequestResource{
			{ResourceType: 2, ResourceName: "orders", ConfigurationKeys: []string{"retention.ms", "ssl.key.password"}},
			{ResourceType: 2, ResourceName: "gone"}, // nil: every key
		},
		IncludeSynonyms: true, IncludeDocumentation: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request = %+v, want %+v", got, want)
	}
}

// Broker resources whose name is no broker id, or names a broker the
// cluster does not have, fail the call before anything is asked of the
// brokers' configs.
func TestClientAdminConfigsBadBroker(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	ctx := clientAdminCtx(t)
	for _, name := range []string{"x", "-1", "1.5"} {
		_, err := client.DescribeConfigs(ctx, &DescribeConfigsRequest{Resources: []DescribeConfigRequestResource{{ResourceType: ResourceTypeBroker, ResourceName: name}}})
		if err == nil || !strings.Contains(err.Error(), "not a broker id") {
			t.Errorf("broker %q: %v, want a not-a-broker-id error", name, err)
		}
	}
	if n := len(rec.requests(protocol.Metadata)); n != 0 {
		t.Errorf("bad names asked for metadata %d times", n)
	}
	_, err := client.IncrementalAlterConfigs(ctx, &IncrementalAlterConfigsRequest{Resources: []IncrementalAlterConfigsRequestResource{{ResourceType: ResourceTypeBroker, ResourceName: "9"}}})
	if err == nil || !strings.Contains(err.Error(), "broker 9") {
		t.Errorf("broker 9 of 3: %v, want an error naming broker 9", err)
	}
	for _, b := range fc.Brokers() {
		if n := b.Requests(protocol.IncrementalAlterConfigs) + b.Requests(protocol.DescribeConfigs); n != 0 {
			t.Errorf("broker %d received %d config requests", b.ID(), n)
		}
	}
}

func TestClientAdminAlterConfigs(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	for _, b := range fc.Brokers() {
		id := b.ID()
		b.Handle(protocol.AlterConfigs, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := &protocol.AlterConfigsResponse{ThrottleTimeMs: 5 * id}
			for _, res := range req.(*protocol.AlterConfigsRequest).Resources {
				out := protocol.AlterConfigsResponseResource{ResourceType: res.ResourceType, ResourceName: res.ResourceName}
				if res.ResourceName == "bad" || (res.ResourceType == 4 && res.ResourceName != strconv.Itoa(int(id))) {
					out.ErrorCode, out.ErrorMessage = 40, clientAdminStr("Invalid value for broker "+strconv.Itoa(int(id)))
				}
				resp.Responses = append(resp.Responses, out)
			}
			return resp, fakebroker.Action{}
		})
	}
	resp, err := client.AlterConfigs(clientAdminCtx(t), &AlterConfigsRequest{
		Resources: []AlterConfigRequestResource{
			{ResourceType: ResourceTypeTopic, ResourceName: "good", Configs: []AlterConfigRequestConfig{{Name: "retention.ms", Value: "1000"}, {Name: "segment.ms", Value: ""}}},
			{ResourceType: ResourceTypeBroker, ResourceName: "2", Configs: []AlterConfigRequestConfig{{Name: "log.cleaner.threads", Value: "2"}}},
			{ResourceType: ResourceTypeTopic, ResourceName: "bad"},
		},
		ValidateOnly: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) != 3 || resp.Errors[AlterConfigsResponseResource{2, "good"}] != nil || resp.Errors[AlterConfigsResponseResource{4, "2"}] != nil {
		t.Fatalf("Errors = %v, want good and broker 2 without error", resp.Errors)
	}
	if e := resp.Errors[AlterConfigsResponseResource{2, "bad"}]; !errors.Is(e, InvalidConfiguration) || !strings.Contains(e.Error(), "broker 3") {
		t.Errorf("Errors[bad] = %v, want InvalidConfiguration from the controller", e)
	}
	if resp.Throttle != 15*time.Millisecond {
		t.Errorf("Throttle = %v, want the longest, 15ms", resp.Throttle)
	}
	ctrl := clientAdminOnlyN(t, fc, protocol.AlterConfigs, map[int32]int{2: 1, 3: 1})
	want := &protocol.AlterConfigsRequest{
		Resources: []protocol.AlterConfigsRequestResource{
			{ResourceType: 2, ResourceName: "good", Configs: []protocol.AlterConfigsRequestConfig{{Name: "retention.ms", Value: clientAdminStr("1000")}, {Name: "segment.ms", Value: clientAdminStr("")}}},
			{ResourceType: 2, ResourceName: "bad"},
		},
		ValidateOnly: true,
	}
	if !reflect.DeepEqual(ctrl[3][0], want) {
		t.Errorf("controller's request = %+v, want %+v", ctrl[3][0], want)
	}
	// Values are never null (null would mean "no value" to the broker).
	for _, s := range rec.requests(protocol.AlterConfigs) {
		for _, res := range s.req.(*protocol.AlterConfigsRequest).Resources {
			for _, c := range res.Configs {
				if c.Value == nil {
					t.Errorf("%s/%s: null value sent", res.ResourceName, c.Name)
				}
			}
		}
	}
}

// clientAdminOnlyN checks how many requests of kind key each broker got
// (the others none), and returns them by broker.
func clientAdminOnlyN(t *testing.T, fc *fakebroker.Cluster, key protocol.ApiKey, want map[int32]int) map[int32][]protocol.Request {
	t.Helper()
	out := map[int32][]protocol.Request{}
	for _, b := range fc.Brokers() {
		if got := b.Requests(key); got != want[b.ID()] {
			t.Fatalf("broker %d received %d %s requests, want %d", b.ID(), got, key, want[b.ID()])
		}
		for _, r := range b.Received(key) {
			out[b.ID()] = append(out[b.ID()], r.Request)
		}
	}
	return out
}

func TestClientAdminIncrementalAlterConfigs(t *testing.T) {
	for _, v := range []int16{0, 1} { // classic and flexible
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			fc, client, _ := clientAdminFake(t)
			for _, b := range fc.Brokers() {
				b.SetMaxVersion(protocol.IncrementalAlterConfigs, v)
				b.Handle(protocol.IncrementalAlterConfigs, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
					resp := &protocol.IncrementalAlterConfigsResponse{}
					for _, res := range req.(*protocol.IncrementalAlterConfigsRequest).Resources {
						out := protocol.AlterConfigsResponseResource{ResourceType: res.ResourceType, ResourceName: res.ResourceName}
						for _, c := range res.Configs {
							if c.ConfigOperation == protocol.ConfigOperationSubtract {
								out.ErrorCode, out.ErrorMessage = 42, clientAdminStr("SUBTRACT on a non-list key")
							}
						}
						resp.Responses = append(resp.Responses, out)
					}
					return resp, fakebroker.Action{}
				})
			}
			resp, err := client.IncrementalAlterConfigs(clientAdminCtx(t), &IncrementalAlterConfigsRequest{
				Resources: []IncrementalAlterConfigsRequestResource{
					{ResourceType: ResourceTypeBroker, ResourceName: "1", Configs: []IncrementalAlterConfigsRequestConfig{
						{Name: "log.cleaner.threads", Value: "2", ConfigOperation: ConfigOperationSubtract},
					}},
					{ResourceType: ResourceTypeTopic, ResourceName: "t", Configs: []IncrementalAlterConfigsRequestConfig{
						{Name: "retention.ms", Value: "1000"}, // Set, the zero value
						{Name: "cleanup.policy", ConfigOperation: ConfigOperationDelete},
						{Name: "follower.replication.throttled.replicas", Value: "0:1", ConfigOperation: ConfigOperationAppend},
					}},
				},
				ValidateOnly: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Resources) != 2 {
				t.Fatalf("resources = %+v, want 2", resp.Resources)
			}
			r0, r1 := resp.Resources[0], resp.Resources[1]
			if r0.ResourceType != ResourceTypeBroker || r0.ResourceName != "1" || !errors.Is(r0.Error, InvalidRequest) || !strings.Contains(r0.Error.Error(), "non-list") {
				t.Errorf("resource 0 = %+v, want broker 1 with InvalidRequest", r0)
			}
			if r1 != (IncrementalAlterConfigsResponseResource{ResourceType: ResourceTypeTopic, ResourceName: "t"}) {
				t.Errorf("resource 1 = %+v, want topic t without error", r1)
			}
			reqs := clientAdminOnlyN(t, fc, protocol.IncrementalAlterConfigs, map[int32]int{1: 1, 3: 1})
			want := &protocol.IncrementalAlterConfigsRequest{
				Resources: []protocol.IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "t", Configs: []protocol.IncrementalAlterConfigsRequestConfig{
					{Name: "retention.ms", ConfigOperation: protocol.ConfigOperationSet, Value: clientAdminStr("1000")},
					{Name: "cleanup.policy", ConfigOperation: protocol.ConfigOperationDelete, Value: clientAdminStr("")},
					{Name: "follower.replication.throttled.replicas", ConfigOperation: protocol.ConfigOperationAppend, Value: clientAdminStr("0:1")},
				}}},
				ValidateOnly: true,
			}
			if !reflect.DeepEqual(reqs[3][0], want) {
				t.Errorf("controller's request = %+v, want %+v", reqs[3][0], want)
			}
		})
	}
}

// An IncrementalAlterConfigs the broker does not speak (Kafka before 2.3)
// is the method's error.
func TestClientAdminIncrementalAlterConfigsUnsupported(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	for _, b := range fc.Brokers() {
		b.SetMaxVersion(protocol.IncrementalAlterConfigs, -1)
	}
	_, err := client.IncrementalAlterConfigs(clientAdminCtx(t), &IncrementalAlterConfigsRequest{Resources: []IncrementalAlterConfigsRequestResource{{ResourceType: ResourceTypeTopic, ResourceName: "t"}}})
	var uv *protocol.UnsupportedVersionError
	if !errors.As(err, &uv) || !strings.Contains(err.Error(), "altering configs incrementally") {
		t.Errorf("err = %v, want an UnsupportedVersionError about altering configs", err)
	}
}
