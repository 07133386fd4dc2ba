package kafka

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Unit tests of the Client's topic administration on the fake broker:
// CreateTopics, DeleteTopics and CreatePartitions reach the controller and
// no other broker, carry the caller's fields and kafka-go's time limits,
// and map the controller's codes into the response's Errors; failures to
// route or to ask are the method's error. The helpers here are shared
// with client_configs_test.go and client_reassign_test.go.

// clientAdminController is the broker the fake cluster of these tests
// names as controller: not the bootstrap broker (1), so that a request
// reaching it was routed there.
const clientAdminController = 3

// clientAdminFake starts a 3-broker fake cluster naming broker 3 as its
// controller, and a Client bootstrapping from broker 1 alone whose
// Transport records every request it carries.
func clientAdminFake(t *testing.T) (*fakebroker.Cluster, *Client, *clientAdminRecorder) {
	t.Helper()
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	clientAdminSetController(fc, clientAdminController)
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &clientAdminRecorder{next: tr}
	return fc, &Client{Addr: TCP(fc.Broker(1).Addr()), Transport: rec}, rec
}

// clientAdminSetController makes every broker's metadata name id as the
// controller (-1: none).
func clientAdminSetController(fc *fakebroker.Cluster, id int32) {
	for _, b := range fc.Brokers() {
		b := b
		b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b.Default(req, hdr).(*protocol.MetadataResponse)
			resp.ControllerID = id
			return resp, fakebroker.Action{}
		})
	}
}

// clientAdminRecorder is a RoundTripper that keeps the requests it
// carries, as built by the Client (before any encoding), with the address
// each went to.
type clientAdminRecorder struct {
	next RoundTripper
	mu   sync.Mutex
	sent []clientAdminSent
}

type clientAdminSent struct {
	addr string
	req  protocol.Request
}

func (r *clientAdminRecorder) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	r.mu.Lock()
	r.sent = append(r.sent, clientAdminSent{addr.String(), req})
	r.mu.Unlock()
	return r.next.RoundTrip(ctx, addr, req)
}

// requests returns the requests of kind key the Client sent.
func (r *clientAdminRecorder) requests(key protocol.ApiKey) []clientAdminSent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []clientAdminSent
	for _, s := range r.sent {
		if s.req.Key() == key {
			out = append(out, s)
		}
	}
	return out
}

// clientAdminAnswer makes broker id answer key with answer, and every
// other broker fail the test if key reaches it.
func clientAdminAnswer(t *testing.T, fc *fakebroker.Cluster, id int32, key protocol.ApiKey, answer func(protocol.Request) protocol.Response) {
	for _, b := range fc.Brokers() {
		b := b
		if b.ID() == id {
			b.Handle(key, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
				return answer(req), fakebroker.Action{}
			})
			continue
		}
		b.Handle(key, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			t.Errorf("%s reached broker %d, not broker %d", key, b.ID(), id)
			return nil, fakebroker.Action{Close: true}
		})
	}
}

// clientAdminOnly checks that broker id alone received n requests of kind
// key, and returns them as it decoded them.
func clientAdminOnly(t *testing.T, fc *fakebroker.Cluster, id int32, key protocol.ApiKey, n int) []protocol.Request {
	t.Helper()
	for _, b := range fc.Brokers() {
		want := 0
		if b.ID() == id {
			want = n
		}
		if got := b.Requests(key); got != want {
			t.Fatalf("broker %d received %d %s requests, want %d", b.ID(), got, key, want)
		}
	}
	var out []protocol.Request
	for _, r := range fc.Broker(id).Received(key) {
		out = append(out, r.Request)
	}
	return out
}

func clientAdminCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientAdminCreateTopics(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	ctx := context.Background() // no deadline: the default time limit applies
	resp, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{
		{
			Topic: "placed", NumPartitions: -1, ReplicationFactor: -1,
			ReplicaAssignments: []ReplicaAssignment{{Partition: 0, Replicas: []int{2, 3}}, {Partition: 1, Replicas: []int{3, 1}}},
			ConfigEntries:      []ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "60000"}, {ConfigName: "cleanup.policy", ConfigValue: ""}},
		},
		{Topic: "plain", NumPartitions: 3, ReplicationFactor: 2},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]error{"placed": nil, "plain": nil}; !reflect.DeepEqual(resp.Errors, want) {
		t.Fatalf("Errors = %v, want %v", resp.Errors, want)
	}
	if p := fc.Partition("placed", 1); !reflect.DeepEqual(p.Replicas, []int32{3, 1}) {
		t.Errorf("placed/1 replicas = %v, want [3 1]", p.Replicas)
	}

	got := clientAdminOnly(t, fc, clientAdminController, protocol.CreateTopics, 1)[0].(*protocol.CreateTopicsRequest)
	if got.TimeoutMs != 2000 || got.ValidateOnly {
		t.Errorf("TimeoutMs = %d, ValidateOnly = %v; want kafka-go's default 2000, false", got.TimeoutMs, got.ValidateOnly)
	}
	sent := rec.requests(protocol.CreateTopics)[0].req.(*protocol.CreateTopicsRequest)
	want := []protocol.CreateTopicsRequestTopic{
		{
			Name: "placed", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: []protocol.CreateTopicsRequestAssignment{{PartitionIndex: 0, BrokerIDs: []int32{2, 3}}, {PartitionIndex: 1, BrokerIDs: []int32{3, 1}}},
			// Values are never null: "" is a value.
			Configs: []protocol.CreateTopicsRequestConfig{{Name: "retention.ms", Value: clientAdminStr("60000")}, {Name: "cleanup.policy", Value: clientAdminStr("")}},
		},
		{Name: "plain", NumPartitions: 3, ReplicationFactor: 2},
	}
	if !reflect.DeepEqual(sent.Topics, want) {
		t.Errorf("topics sent = %+v, want %+v", sent.Topics, want)
	}

	// Again: the topic exists, which is the topic's error, not the call's.
	fc.Broker(clientAdminController).Handle(protocol.CreateTopics, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := fc.Broker(clientAdminController).Default(req, hdr).(*protocol.CreateTopicsResponse)
		for i := range resp.Topics {
			if resp.Topics[i].ErrorCode != 0 {
				resp.Topics[i].ErrorMessage = clientAdminStr("Topic '" + resp.Topics[i].Name + "' already exists.")
			}
		}
		resp.ThrottleTimeMs = 30
		return resp, fakebroker.Action{}
	})
	resp, err = client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "plain", NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.Errors["plain"]; !errors.Is(e, TopicAlreadyExists) || !strings.Contains(e.Error(), "already exists.") {
		t.Errorf("Errors[plain] = %v, want TopicAlreadyExists with the broker's message", e)
	}
	if resp.Throttle != 30*time.Millisecond {
		t.Errorf("Throttle = %v, want 30ms", resp.Throttle)
	}
}

func TestClientAdminCreateTopicsTimeout(t *testing.T) {
	// kafka-go's rule: half of the smaller of Client.Timeout and the
	// context's time left; the default without Client.Timeout.
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		ctxLeft   time.Duration
		validate  bool
		min, max  int32
		wantError bool
	}{
		{name: "client timeout", timeout: 10 * time.Second, min: 5000, max: 5000},
		{name: "shorter context", timeout: 10 * time.Second, ctxLeft: 4 * time.Second, min: 1500, max: 2000, validate: true},
		{name: "context alone", ctxLeft: 30 * time.Second, min: 2000, max: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc, client, _ := clientAdminFake(t)
			client.Timeout = tc.timeout
			ctx := context.Background()
			if tc.ctxLeft > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxLeft)
				defer cancel()
			}
			resp, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "t", NumPartitions: 1, ReplicationFactor: 1}}, ValidateOnly: tc.validate})
			if err != nil || resp.Errors["t"] != nil {
				t.Fatalf("CreateTopics: %v, %v", resp, err)
			}
			got := clientAdminOnly(t, fc, clientAdminController, protocol.CreateTopics, 1)[0].(*protocol.CreateTopicsRequest)
			if got.TimeoutMs < tc.min || got.TimeoutMs > tc.max || got.ValidateOnly != tc.validate {
				t.Errorf("TimeoutMs = %d, ValidateOnly = %v; want %d..%d, %v", got.TimeoutMs, got.ValidateOnly, tc.min, tc.max, tc.validate)
			}
			// DeleteTopics and CreatePartitions follow the same rule.
			if _, err := client.DeleteTopics(ctx, &DeleteTopicsRequest{Topics: []string{"t"}}); err != nil {
				t.Fatal(err)
			}
			del := clientAdminOnly(t, fc, clientAdminController, protocol.DeleteTopics, 1)[0].(*protocol.DeleteTopicsRequest)
			if del.TimeoutMs < tc.min || del.TimeoutMs > tc.max {
				t.Errorf("DeleteTopics TimeoutMs = %d, want %d..%d", del.TimeoutMs, tc.min, tc.max)
			}
		})
	}
}

func TestClientAdminDeleteTopics(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	fc.CreateTopic("gone", 2, 3)
	resp, err := client.DeleteTopics(clientAdminCtx(t), &DeleteTopicsRequest{Topics: []string{"gone", "never"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) != 2 || resp.Errors["gone"] != nil {
		t.Fatalf("Errors = %v, want gone: nil and never: an error", resp.Errors)
	}
	// The bare code, as kafka-go gives it.
	if resp.Errors["never"] != UnknownTopicOrPartition {
		t.Errorf("Errors[never] = %#v, want UnknownTopicOrPartition", resp.Errors["never"])
	}
	clientAdminOnly(t, fc, clientAdminController, protocol.DeleteTopics, 1)
	sent := rec.requests(protocol.DeleteTopics)[0].req.(*protocol.DeleteTopicsRequest)
	wantV6 := []protocol.DeleteTopicsRequestTopic{{Name: "gone"}, {Name: "never"}}
	if !reflect.DeepEqual(sent.TopicNames, []string{"gone", "never"}) || !reflect.DeepEqual(sent.Topics, wantV6) {
		t.Errorf("sent %+v: want the names for every version", sent)
	}

	// Through an old version too (names only), on a fresh cluster (the
	// Transport keeps the versions a broker advertised).
	fc, client, _ = clientAdminFake(t)
	fc.Broker(clientAdminController).SetMaxVersion(protocol.DeleteTopics, 3)
	fc.CreateTopic("old", 1, 1)
	resp, err = client.DeleteTopics(clientAdminCtx(t), &DeleteTopicsRequest{Topics: []string{"old"}})
	if err != nil || len(resp.Errors) != 1 || resp.Errors["old"] != nil {
		t.Fatalf("DeleteTopics v3: %+v, %v", resp, err)
	}
}

func TestClientAdminCreatePartitions(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	client.Timeout = 8 * time.Second
	clientAdminAnswer(t, fc, clientAdminController, protocol.CreatePartitions, func(req protocol.Request) protocol.Response {
		resp := &protocol.CreatePartitionsResponse{ThrottleTimeMs: 5}
		for _, tp := range req.(*protocol.CreatePartitionsRequest).Topics {
			r := protocol.CreatePartitionsResponseResult{Name: tp.Name}
			if tp.Name == "small" {
				r.ErrorCode, r.ErrorMessage = 37, clientAdminStr("Topic currently has 3 partitions, which is higher than the requested 2.")
			}
			resp.Results = append(resp.Results, r)
		}
		return resp
	})
	resp, err := client.CreatePartitions(clientAdminCtx(t), &CreatePartitionsRequest{
		Topics: []TopicPartitionsConfig{
			{Name: "grow", Count: 5, TopicPartitionAssignments: []TopicPartitionAssignment{{BrokerIDs: []int32{1, 2}}, {BrokerIDs: []int32{2, 3}}}},
			{Name: "small", Count: 2},
		},
		ValidateOnly: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Throttle != 5*time.Millisecond || len(resp.Errors) != 2 || resp.Errors["grow"] != nil {
		t.Fatalf("response %+v", resp)
	}
	if e := resp.Errors["small"]; !errors.Is(e, InvalidPartitionNumber) || !strings.Contains(e.Error(), "higher than the requested 2") {
		t.Errorf("Errors[small] = %v, want InvalidPartitionNumber with the broker's message", e)
	}

	got := clientAdminOnly(t, fc, clientAdminController, protocol.CreatePartitions, 1)[0].(*protocol.CreatePartitionsRequest)
	want := &protocol.CreatePartitionsRequest{
		Topics: []protocol.CreatePartitionsRequestTopic{
			{Name: "grow", Count: 5, Assignments: []protocol.CreatePartitionsRequestAssignment{{BrokerIDs: []int32{1, 2}}, {BrokerIDs: []int32{2, 3}}}},
			{Name: "small", Count: 2},
		},
		TimeoutMs:    4000, // half of Client.Timeout
		ValidateOnly: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request = %+v, want %+v", got, want)
	}
	// No assignments must be null on the wire (the controller places the
	// partitions), not an empty list.
	if a := rec.requests(protocol.CreatePartitions)[0].req.(*protocol.CreatePartitionsRequest).Topics[1].Assignments; a != nil {
		t.Errorf("assignments of small = %#v, want nil", a)
	}
}

// Every admin method reaches the bootstrap broker when the metadata names
// no controller (KRaft brokers forward admin requests themselves).
func TestClientAdminNoControllerNamed(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	clientAdminSetController(fc, -1)
	resp, err := client.CreateTopics(clientAdminCtx(t), &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "x", NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil || resp.Errors["x"] != nil {
		t.Fatalf("CreateTopics: %+v, %v", resp, err)
	}
	clientAdminOnly(t, fc, 1, protocol.CreateTopics, 1)

	clientAdminAnswer(t, fc, 1, protocol.DescribeConfigs, func(req protocol.Request) protocol.Response {
		return &protocol.DescribeConfigsResponse{Results: []protocol.DescribeConfigsResponseResult{{ResourceType: 2, ResourceName: "x"}}}
	})
	dresp, err := client.DescribeConfigs(clientAdminCtx(t), &DescribeConfigsRequest{Resources: []DescribeConfigRequestResource{{ResourceType: ResourceTypeTopic, ResourceName: "x"}}})
	if err != nil || len(dresp.Resources) != 1 {
		t.Fatalf("DescribeConfigs: %+v, %v", dresp, err)
	}
}

// Failures of the request as a whole are the method's error, wrapped with
// what was being done.
func TestClientAdminRequestErrors(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	ctx := clientAdminCtx(t)
	fc.Broker(clientAdminController).Handle(protocol.CreateTopics, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	if _, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "x"}}}); err == nil || !strings.Contains(err.Error(), "creating topics") {
		t.Errorf("CreateTopics on a closed connection: %v, want an error about creating topics", err)
	}

	// A controller that is not among the brokers.
	clientAdminSetController(fc, 7)
	if _, err := client.DeleteTopics(ctx, &DeleteTopicsRequest{Topics: []string{"x"}}); err != nil {
		// Not named among the brokers means "none": the bootstrap broker.
		t.Errorf("DeleteTopics with an unknown controller id: %v", err)
	}

	// No address at all.
	none := &Client{Transport: client.Transport}
	if _, err := none.CreatePartitions(ctx, &CreatePartitionsRequest{}); err == nil {
		t.Error("CreatePartitions without an address: no error")
	}

	// A cancelled context.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := client.ElectLeaders(cancelled, &ElectLeadersRequest{Topic: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("ElectLeaders with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestClientAdminNilRequests(t *testing.T) {
	_, client, rec := clientAdminFake(t)
	ctx := clientAdminCtx(t)
	for name, call := range map[string]func() (any, error){
		"CreateTopics":                func() (any, error) { return client.CreateTopics(ctx, nil) },
		"DeleteTopics":                func() (any, error) { return client.DeleteTopics(ctx, nil) },
		"CreatePartitions":            func() (any, error) { return client.CreatePartitions(ctx, nil) },
		"DescribeConfigs":             func() (any, error) { return client.DescribeConfigs(ctx, nil) },
		"AlterConfigs":                func() (any, error) { return client.AlterConfigs(ctx, nil) },
		"IncrementalAlterConfigs":     func() (any, error) { return client.IncrementalAlterConfigs(ctx, nil) },
		"ElectLeaders":                func() (any, error) { return client.ElectLeaders(ctx, nil) },
		"AlterPartitionReassignments": func() (any, error) { return client.AlterPartitionReassignments(ctx, nil) },
		"ListPartitionReassignments":  func() (any, error) { return client.ListPartitionReassignments(ctx, nil) },
	} {
		if resp, err := call(); err == nil || !strings.Contains(err.Error(), "nil request") {
			t.Errorf("%s(nil) = %v, %v; want a nil request error", name, resp, err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.sent) != 0 {
		t.Errorf("nil requests sent %d requests", len(rec.sent))
	}
}

// Empty requests are sent as they are, as kafka-go does, and answered
// with empty responses.
func TestClientAdminEmptyRequests(t *testing.T) {
	fc, client, _ := clientAdminFake(t)
	ctx := clientAdminCtx(t)
	cr, err := client.CreateTopics(ctx, &CreateTopicsRequest{})
	if err != nil || cr.Errors == nil || len(cr.Errors) != 0 {
		t.Errorf("CreateTopics(empty) = %+v, %v; want an empty, non-nil Errors", cr, err)
	}
	dr, err := client.DeleteTopics(ctx, &DeleteTopicsRequest{})
	if err != nil || dr.Errors == nil || len(dr.Errors) != 0 {
		t.Errorf("DeleteTopics(empty) = %+v, %v; want an empty, non-nil Errors", dr, err)
	}
	clientAdminOnly(t, fc, clientAdminController, protocol.CreateTopics, 1)
	clientAdminOnly(t, fc, clientAdminController, protocol.DeleteTopics, 1)
}

func clientAdminStr(s string) *string { return &s }

// Unit tests of ElectLeaders and the partition reassignment requests on
// the fake broker: they reach the controller alone, carry the caller's
// fields (nil and empty lists as kafka-go documents them), and map the
// controller's codes into the response.

func TestClientAdminElectLeaders(t *testing.T) {
	for _, v := range []int16{0, 2} { // no top-level error code in v0
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			fc, client, rec := clientAdminFake(t)
			fc.Broker(clientAdminController).SetMaxVersion(protocol.ElectLeaders, v)
			clientAdminAnswer(t, fc, clientAdminController, protocol.ElectLeaders, func(req protocol.Request) protocol.Response {
				r := req.(*protocol.ElectLeadersRequest)
				resp := &protocol.ElectLeadersResponse{ErrorCode: 31} // dropped at v0
				for _, tp := range r.TopicPartitions {
					out := protocol.ElectLeadersResponseTopic{Topic: tp.Topic}
					for _, p := range tp.Partitions {
						res := protocol.ElectLeadersResponsePartition{PartitionID: p}
						switch p {
						case 1:
							res.ErrorCode, res.ErrorMessage = 84, clientAdminStr("Leader election not needed for topic partition")
						case 2:
							res.ErrorCode = 3
						}
						out.PartitionResult = append(out.PartitionResult, res)
					}
					resp.ReplicaElectionResults = append(resp.ReplicaElectionResults, out)
				}
				return resp
			})
			resp, err := client.ElectLeaders(clientAdminCtx(t), &ElectLeadersRequest{Topic: "t", Partitions: []int{0, 1, 2}, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if v == 0 && resp.Error != nil || v > 0 && resp.Error != ClusterAuthorizationFailed {
				t.Errorf("v%d: Error = %v", v, resp.Error)
			}
			if len(resp.PartitionResults) != 3 || resp.PartitionResults[0] != (ElectLeadersResponsePartitionResult{Partition: 0}) {
				t.Fatalf("PartitionResults = %+v", resp.PartitionResults)
			}
			if p := resp.PartitionResults[1]; p.Partition != 1 || !errors.Is(p.Error, ElectionNotNeeded) || !strings.Contains(p.Error.Error(), "not needed") {
				t.Errorf("partition 1 = %+v, want ElectionNotNeeded with the message", p)
			}
			if p := resp.PartitionResults[2]; p != (ElectLeadersResponsePartitionResult{Partition: 2, Error: UnknownTopicOrPartition}) {
				t.Errorf("partition 2 = %+v, want UnknownTopicOrPartition", p)
			}
			got := clientAdminOnly(t, fc, clientAdminController, protocol.ElectLeaders, 1)[0]
			want := &protocol.ElectLeadersRequest{
				ElectionType:    protocol.ElectionTypePreferred,
				TopicPartitions: []protocol.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0, 1, 2}}},
				TimeoutMs:       3000,
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("request = %+v, want %+v", got, want)
			}

			// No partitions: an empty list for the topic, never null (which
			// would elect every partition of the cluster).
			if _, err := client.ElectLeaders(clientAdminCtx(t), &ElectLeadersRequest{Topic: "t"}); err != nil {
				t.Fatal(err)
			}
			sent := rec.requests(protocol.ElectLeaders)[1].req.(*protocol.ElectLeadersRequest)
			if len(sent.TopicPartitions) != 1 || sent.TopicPartitions[0].Partitions == nil || len(sent.TopicPartitions[0].Partitions) != 0 || sent.TimeoutMs != 0 {
				t.Errorf("request without partitions = %+v, want one topic with an empty list, timeout 0", sent)
			}
		})
	}
}

func TestClientAdminAlterPartitionReassignments(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	clientAdminAnswer(t, fc, clientAdminController, protocol.AlterPartitionReassignments, func(req protocol.Request) protocol.Response {
		resp := &protocol.AlterPartitionReassignmentsResponse{}
		for _, tp := range req.(*protocol.AlterPartitionReassignmentsRequest).Topics {
			out := protocol.AlterPartitionReassignmentsResponseTopic{Name: tp.Name}
			for _, p := range tp.Partitions {
				res := protocol.AlterPartitionReassignmentsResponsePartition{PartitionIndex: p.PartitionIndex}
				if p.PartitionIndex == 1 { // (decoded, null and empty look the same)
					res.ErrorCode, res.ErrorMessage = 85, clientAdminStr("no reassignment to cancel")
				}
				out.Partitions = append(out.Partitions, res)
			}
			resp.Responses = append(resp.Responses, out)
		}
		return resp
	})
	resp, err := client.AlterPartitionReassignments(clientAdminCtx(t), &AlterPartitionReassignmentsRequest{
		Topic: "main",
		Assignments: []AlterPartitionReassignmentsRequestAssignment{
			{PartitionID: 0, BrokerIDs: []int{2, 3}},
			{Topic: "other", PartitionID: 4, BrokerIDs: []int{1}},
			{PartitionID: 1}, // nil: cancel
			{Topic: "main", PartitionID: 2, BrokerIDs: []int{}},
		},
		Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || len(resp.PartitionResults) != 4 {
		t.Fatalf("response %+v", resp)
	}
	want := []AlterPartitionReassignmentsResponsePartitionResult{
		{Topic: "main", PartitionID: 0},
		{Topic: "main", PartitionID: 1},
		{Topic: "main", PartitionID: 2},
		{Topic: "other", PartitionID: 4},
	}
	for i, r := range resp.PartitionResults {
		e := r.Error
		r.Error = nil
		if r != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, r, want[i])
		}
		if cancelled := i == 1; cancelled != errors.Is(e, NoReassignmentInProgress) || !cancelled && e != nil {
			t.Errorf("result %d error = %v", i, e)
		}
	}

	clientAdminOnly(t, fc, clientAdminController, protocol.AlterPartitionReassignments, 1)
	sent := rec.requests(protocol.AlterPartitionReassignments)[0].req.(*protocol.AlterPartitionReassignmentsRequest)
	wantReq := &protocol.AlterPartitionReassignmentsRequest{
		TimeoutMs: 1500,
		Topics: []protocol.AlterPartitionReassignmentsRequestTopic{
			{Name: "main", Partitions: []protocol.AlterPartitionReassignmentsRequestPartition{
				{PartitionIndex: 0, Replicas: []int32{2, 3}},
				{PartitionIndex: 1, Replicas: nil},       // null on the wire: cancel
				{PartitionIndex: 2, Replicas: []int32{}}, // an empty set, for the broker to refuse
			}},
			{Name: "other", Partitions: []protocol.AlterPartitionReassignmentsRequestPartition{{PartitionIndex: 4, Replicas: []int32{1}}}},
		},
	}
	if !reflect.DeepEqual(sent, wantReq) {
		t.Errorf("request = %+v, want %+v", sent, wantReq)
	}

	// A top-level error, with its message.
	fc.Broker(clientAdminController).Handle(protocol.AlterPartitionReassignments, nil)
	clientAdminAnswer(t, fc, clientAdminController, protocol.AlterPartitionReassignments, func(protocol.Request) protocol.Response {
		return &protocol.AlterPartitionReassignmentsResponse{ErrorCode: 41, ErrorMessage: clientAdminStr("not the controller")}
	})
	resp, err = client.AlterPartitionReassignments(clientAdminCtx(t), &AlterPartitionReassignmentsRequest{Topic: "main"})
	if err != nil || !errors.Is(resp.Error, NotController) || !strings.Contains(resp.Error.Error(), "not the controller") || resp.PartitionResults != nil {
		t.Errorf("top-level error: %+v, %v", resp, err)
	}
}

func TestClientAdminListPartitionReassignments(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	clientAdminAnswer(t, fc, clientAdminController, protocol.ListPartitionReassignments, func(req protocol.Request) protocol.Response {
		return &protocol.ListPartitionReassignmentsResponse{Topics: []protocol.ListPartitionReassignmentsResponseTopic{
			{Name: "moving", Partitions: []protocol.ListPartitionReassignmentsResponsePartition{
				{PartitionIndex: 0, Replicas: []int32{1, 2, 3}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
				{PartitionIndex: 2, Replicas: []int32{2, 3}},
			}},
		}}
	})
	ctx := clientAdminCtx(t)

	// Every reassignment: Topics null on the wire.
	resp, err := client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ListPartitionReassignmentsResponseTopic{"moving": {Partitions: []ListPartitionReassignmentsResponsePartition{
		{PartitionIndex: 0, Replicas: []int{1, 2, 3}, AddingReplicas: []int{3}, RemovingReplicas: []int{1}},
		{PartitionIndex: 2, Replicas: []int{2, 3}},
	}}}
	if resp.Error != nil || !reflect.DeepEqual(resp.Topics, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	if sent := rec.requests(protocol.ListPartitionReassignments)[0].req.(*protocol.ListPartitionReassignmentsRequest); sent.Topics != nil || sent.TimeoutMs != 1000 {
		t.Errorf("request for everything = %+v, want null topics, 1000 ms", sent)
	}

	// Named topics, in name order.
	if _, err := client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{Topics: map[string]ListPartitionReassignmentsRequestTopic{
		"z": {PartitionIndexes: []int{3, 1}},
		"a": {PartitionIndexes: []int{0}},
	}}); err != nil {
		t.Fatal(err)
	}
	got := clientAdminOnly(t, fc, clientAdminController, protocol.ListPartitionReassignments, 2)[1]
	wantReq := &protocol.ListPartitionReassignmentsRequest{Topics: []protocol.ListPartitionReassignmentsRequestTopic{
		{Name: "a", PartitionIndexes: []int32{0}},
		{Name: "z", PartitionIndexes: []int32{3, 1}},
	}}
	if !reflect.DeepEqual(got, wantReq) {
		t.Errorf("request = %+v, want %+v", got, wantReq)
	}

	// Nothing in progress: an empty, non-nil map. A top-level error.
	fc.Broker(clientAdminController).Handle(protocol.ListPartitionReassignments, nil)
	clientAdminAnswer(t, fc, clientAdminController, protocol.ListPartitionReassignments, func(protocol.Request) protocol.Response {
		return &protocol.ListPartitionReassignmentsResponse{ErrorCode: 31}
	})
	resp, err = client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{})
	if err != nil || resp.Topics == nil || len(resp.Topics) != 0 || resp.Error != ClusterAuthorizationFailed {
		t.Errorf("empty answer: %+v, %v", resp, err)
	}
}
