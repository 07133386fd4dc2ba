package kafka

// Unit tests of the Client's transaction requests on the fake broker: each
// reaches the coordinator of its transactional id (or of its group, for
// TxnOffsetCommit) and no other broker, carries the caller's fields, and
// maps the coordinator's codes to kafka.Error values in the response;
// failures to route or to ask are the method's error.

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientTxnFake starts a 3-broker fake cluster whose coordinator (of every
// group and transactional id) is broker 2, and a Client bootstrapping from
// all of it.
func clientTxnFake(t *testing.T) (*fakebroker.Cluster, *Client) {
	t.Helper()
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Coordinator: 2})
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return fc, &Client{Addr: TCP(fc.Addrs()...), Timeout: 10 * time.Second, Transport: tr}
}

// clientTxnAnswer makes every broker of fc answer key: the coordinator
// with answer, the others with notCoordinator (as a broker that does not
// coordinate the key would).
func clientTxnAnswer(fc *fakebroker.Cluster, key protocol.ApiKey, answer, notCoordinator func(protocol.Request) protocol.Response) {
	for _, b := range fc.Brokers() {
		h := notCoordinator
		if b.ID() == 2 {
			h = answer
		}
		b.Handle(key, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return h(req), fakebroker.Action{}
		})
	}
}

// clientTxnOnlyCoordinator checks that broker 2 alone received n requests
// of kind key, and returns them.
func clientTxnOnlyCoordinator(t *testing.T, fc *fakebroker.Cluster, key protocol.ApiKey, n int) []fakebroker.Received {
	t.Helper()
	for _, b := range fc.Brokers() {
		want := 0
		if b.ID() == 2 {
			want = n
		}
		if got := b.Requests(key); got != want {
			t.Fatalf("broker %d received %d %s requests, want %d", b.ID(), got, key, want)
		}
	}
	return fc.Broker(2).Received(key)
}

// clientTxnLookups returns the FindCoordinator requests the cluster
// received, as (key type, key) pairs.
func clientTxnLookups(fc *fakebroker.Cluster) []string {
	var out []string
	for _, b := range fc.Brokers() {
		for _, r := range b.Received(protocol.FindCoordinator) {
			fr := r.Request.(*protocol.FindCoordinatorRequest)
			key := fr.CoordinatorKey
			if len(fr.CoordinatorKeys) > 0 {
				key = fr.CoordinatorKeys[0]
			}
			out = append(out, string(rune('0'+fr.KeyType))+":"+key)
		}
	}
	return out
}

func clientTxnCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientTxnAddPartitionsToTxn(t *testing.T) {
	fc, client := clientTxnFake(t)
	clientTxnAnswer(fc, protocol.AddPartitionsToTxn, func(req protocol.Request) protocol.Response {
		r := req.(*protocol.AddPartitionsToTxnRequest)
		resp := &protocol.AddPartitionsToTxnResponse{ThrottleTimeMs: 25}
		for _, tp := range r.Topics {
			res := protocol.AddPartitionsToTxnTopicResult{Name: tp.Name}
			for _, p := range tp.Partitions {
				code := int16(0)
				if tp.Name == "b" {
					code = 3 // UNKNOWN_TOPIC_OR_PARTITION
				}
				res.Partitions = append(res.Partitions, protocol.AddPartitionsToTxnPartitionResult{PartitionIndex: p, ErrorCode: code})
			}
			resp.Results = append(resp.Results, res)
		}
		return resp
	}, func(protocol.Request) protocol.Response {
		t.Error("AddPartitionsToTxn reached a broker that is not the coordinator")
		return &protocol.AddPartitionsToTxnResponse{}
	})

	resp, err := client.AddPartitionsToTxn(clientTxnCtx(t), &AddPartitionsToTxnRequest{
		TransactionalID: "tx-1",
		ProducerID:      4000,
		ProducerEpoch:   3,
		Topics: map[string][]AddPartitionToTxn{
			"b": {{Partition: 0}},
			"a": {{Partition: 2}, {Partition: 0}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Throttle != 25*time.Millisecond {
		t.Errorf("Throttle = %v, want 25ms", resp.Throttle)
	}
	want := map[string][]AddPartitionToTxnPartition{
		"a": {{Partition: 2}, {Partition: 0}},
		"b": {{Partition: 0, Error: UnknownTopicOrPartition}},
	}
	if !reflect.DeepEqual(resp.Topics, want) {
		t.Errorf("Topics = %+v, want %+v", resp.Topics, want)
	}
	if !errors.Is(resp.Topics["b"][0].Error, UnknownTopicOrPartition) {
		t.Errorf("errors.Is(%v, UnknownTopicOrPartition) = false", resp.Topics["b"][0].Error)
	}

	got := clientTxnOnlyCoordinator(t, fc, protocol.AddPartitionsToTxn, 1)
	wantReq := &protocol.AddPartitionsToTxnRequest{
		TransactionalID: "tx-1", ProducerID: 4000, ProducerEpoch: 3,
		Topics: []protocol.AddPartitionsToTxnTopic{{Name: "a", Partitions: []int32{2, 0}}, {Name: "b", Partitions: []int32{0}}},
	}
	if !reflect.DeepEqual(got[0].Request, wantReq) {
		t.Errorf("request = %+v, want %+v", got[0].Request, wantReq)
	}
	if v := got[0].Header.Version; v != 3 {
		t.Errorf("sent v%d, want v3 (the highest a client may use)", v)
	}
	if l := clientTxnLookups(fc); !reflect.DeepEqual(l, []string{"1:tx-1"}) {
		t.Errorf("coordinator lookups = %q, want the transactional id's", l)
	}
}

func TestClientTxnAddPartitionsToTxnEmpty(t *testing.T) {
	fc, client := clientTxnFake(t)
	clientTxnAnswer(fc, protocol.AddPartitionsToTxn, func(protocol.Request) protocol.Response {
		return &protocol.AddPartitionsToTxnResponse{}
	}, func(protocol.Request) protocol.Response { return &protocol.AddPartitionsToTxnResponse{} })
	resp, err := client.AddPartitionsToTxn(clientTxnCtx(t), &AddPartitionsToTxnRequest{TransactionalID: "tx"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Topics == nil || len(resp.Topics) != 0 {
		t.Errorf("Topics = %#v, want an empty map", resp.Topics)
	}
	got := clientTxnOnlyCoordinator(t, fc, protocol.AddPartitionsToTxn, 1)
	if r := got[0].Request.(*protocol.AddPartitionsToTxnRequest); r.Topics != nil {
		t.Errorf("sent topics %+v, want none", r.Topics)
	}
}

// An older coordinator gets the request at its own version.
func TestClientTxnAddPartitionsToTxnOldBroker(t *testing.T) {
	fc, client := clientTxnFake(t)
	for _, b := range fc.Brokers() {
		b.SetMaxVersion(protocol.AddPartitionsToTxn, 0)
	}
	clientTxnAnswer(fc, protocol.AddPartitionsToTxn, func(req protocol.Request) protocol.Response {
		return &protocol.AddPartitionsToTxnResponse{Results: []protocol.AddPartitionsToTxnTopicResult{
			{Name: "a", Partitions: []protocol.AddPartitionsToTxnPartitionResult{{PartitionIndex: 1, ErrorCode: 51}}},
		}}
	}, func(protocol.Request) protocol.Response { return &protocol.AddPartitionsToTxnResponse{} })
	resp, err := client.AddPartitionsToTxn(clientTxnCtx(t), &AddPartitionsToTxnRequest{
		TransactionalID: "tx", Topics: map[string][]AddPartitionToTxn{"a": {{Partition: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Topics["a"]; len(got) != 1 || !errors.Is(got[0].Error, ConcurrentTransactions) {
		t.Errorf(`Topics["a"] = %+v, want partition 1 with ConcurrentTransactions`, got)
	}
	if v := clientTxnOnlyCoordinator(t, fc, protocol.AddPartitionsToTxn, 1)[0].Header.Version; v != 0 {
		t.Errorf("sent v%d, want v0", v)
	}
}

func TestClientTxnAddOffsetsToTxn(t *testing.T) {
	fc, client := clientTxnFake(t)
	clientTxnAnswer(fc, protocol.AddOffsetsToTxn, func(protocol.Request) protocol.Response {
		return &protocol.AddOffsetsToTxnResponse{ThrottleTimeMs: 7}
	}, func(protocol.Request) protocol.Response {
		return &protocol.AddOffsetsToTxnResponse{ErrorCode: 16}
	})
	resp, err := client.AddOffsetsToTxn(clientTxnCtx(t), &AddOffsetsToTxnRequest{
		TransactionalID: "tx-2", ProducerID: 77, ProducerEpoch: 1, GroupID: "g",
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || resp.Throttle != 7*time.Millisecond {
		t.Errorf("response = %+v, want no error and 7ms throttle", resp)
	}
	got := clientTxnOnlyCoordinator(t, fc, protocol.AddOffsetsToTxn, 1)
	want := &protocol.AddOffsetsToTxnRequest{TransactionalID: "tx-2", ProducerID: 77, ProducerEpoch: 1, GroupID: "g"}
	if !reflect.DeepEqual(got[0].Request, want) {
		t.Errorf("request = %+v, want %+v", got[0].Request, want)
	}
	if l := clientTxnLookups(fc); !reflect.DeepEqual(l, []string{"1:tx-2"}) {
		t.Errorf("coordinator lookups = %q, want the transactional id's", l)
	}

	// The coordinator's refusal is the response's Error.
	fc.Broker(2).ScriptNext(protocol.AddOffsetsToTxn, fakebroker.Step{Response: &protocol.AddOffsetsToTxnResponse{ErrorCode: 90}})
	resp, err = client.AddOffsetsToTxn(clientTxnCtx(t), &AddOffsetsToTxnRequest{TransactionalID: "tx-2", GroupID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(resp.Error, ProducerFenced) {
		t.Errorf("Error = %v, want ProducerFenced", resp.Error)
	}
}

func TestClientTxnEndTxn(t *testing.T) {
	fc, client := clientTxnFake(t)
	clientTxnAnswer(fc, protocol.EndTxn, func(req protocol.Request) protocol.Response {
		if !req.(*protocol.EndTxnRequest).Committed {
			return &protocol.EndTxnResponse{ErrorCode: 48} // INVALID_TXN_STATE
		}
		return &protocol.EndTxnResponse{ThrottleTimeMs: 3}
	}, func(protocol.Request) protocol.Response {
		return &protocol.EndTxnResponse{ErrorCode: 16}
	})
	ctx := clientTxnCtx(t)
	resp, err := client.EndTxn(ctx, &EndTxnRequest{TransactionalID: "tx-3", ProducerID: 9, ProducerEpoch: 2, Committed: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || resp.Throttle != 3*time.Millisecond {
		t.Errorf("commit response = %+v, want no error and 3ms throttle", resp)
	}
	resp, err = client.EndTxn(ctx, &EndTxnRequest{TransactionalID: "tx-3", ProducerID: 9, ProducerEpoch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(resp.Error, InvalidTransactionState) {
		t.Errorf("abort response Error = %v, want InvalidTransactionState", resp.Error)
	}
	got := clientTxnOnlyCoordinator(t, fc, protocol.EndTxn, 2)
	want := []protocol.Request{
		&protocol.EndTxnRequest{TransactionalID: "tx-3", ProducerID: 9, ProducerEpoch: 2, Committed: true},
		&protocol.EndTxnRequest{TransactionalID: "tx-3", ProducerID: 9, ProducerEpoch: 2},
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Request, want[i]) {
			t.Errorf("request %d = %+v, want %+v", i, got[i].Request, want[i])
		}
		if v := got[i].Header.Version; v != 4 {
			t.Errorf("request %d sent at v%d, want v4", i, v)
		}
	}
}

func TestClientTxnTxnOffsetCommit(t *testing.T) {
	fc, client := clientTxnFake(t)
	clientTxnAnswer(fc, protocol.TxnOffsetCommit, func(req protocol.Request) protocol.Response {
		r := req.(*protocol.TxnOffsetCommitRequest)
		resp := &protocol.TxnOffsetCommitResponse{ThrottleTimeMs: 4}
		for _, tp := range r.Topics {
			rt := protocol.TxnOffsetCommitResponseTopic{Name: tp.Name}
			for _, p := range tp.Partitions {
				code := int16(0)
				if p.PartitionIndex == 1 {
					code = 22 // ILLEGAL_GENERATION
				}
				rt.Partitions = append(rt.Partitions, protocol.TxnOffsetCommitResponsePartition{PartitionIndex: p.PartitionIndex, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}, func(protocol.Request) protocol.Response {
		t.Error("TxnOffsetCommit reached a broker that is not the coordinator")
		return &protocol.TxnOffsetCommitResponse{}
	})
	ctx := clientTxnCtx(t)
	resp, err := client.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{
		TransactionalID: "tx-4", GroupID: "group-4", ProducerID: 5, ProducerEpoch: 6,
		GenerationID: 7, MemberID: "m-1", GroupInstanceID: "i-1",
		Topics: map[string][]TxnOffsetCommit{
			"t": {{Partition: 0, Offset: 10, Metadata: "meta"}, {Partition: 1, Offset: 20}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Throttle != 4*time.Millisecond {
		t.Errorf("Throttle = %v, want 4ms", resp.Throttle)
	}
	want := map[string][]TxnOffsetCommitPartition{"t": {{Partition: 0}, {Partition: 1, Error: IllegalGeneration}}}
	if !reflect.DeepEqual(resp.Topics, want) {
		t.Errorf("Topics = %+v, want %+v", resp.Topics, want)
	}

	// Without member identity: the generation as given (0), no instance id.
	if _, err := client.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{
		TransactionalID: "tx-4", GroupID: "group-4", Topics: map[string][]TxnOffsetCommit{"t": {{Partition: 2, Offset: 1}}},
	}); err != nil {
		t.Fatal(err)
	}

	got := clientTxnOnlyCoordinator(t, fc, protocol.TxnOffsetCommit, 2)
	wantReqs := []*protocol.TxnOffsetCommitRequest{{
		TransactionalID: "tx-4", GroupID: "group-4", ProducerID: 5, ProducerEpoch: 6,
		GenerationID: 7, MemberID: "m-1", GroupInstanceID: clientTxnStr("i-1"),
		Topics: []protocol.TxnOffsetCommitRequestTopic{{Name: "t", Partitions: []protocol.TxnOffsetCommitRequestPartition{
			{PartitionIndex: 0, CommittedOffset: 10, CommittedLeaderEpoch: -1, CommittedMetadata: clientTxnStr("meta")},
			{PartitionIndex: 1, CommittedOffset: 20, CommittedLeaderEpoch: -1, CommittedMetadata: clientTxnStr("")},
		}}},
	}, {
		TransactionalID: "tx-4", GroupID: "group-4",
		Topics: []protocol.TxnOffsetCommitRequestTopic{{Name: "t", Partitions: []protocol.TxnOffsetCommitRequestPartition{
			{PartitionIndex: 2, CommittedOffset: 1, CommittedLeaderEpoch: -1, CommittedMetadata: clientTxnStr("")},
		}}},
	}}
	for i, w := range wantReqs {
		if !reflect.DeepEqual(got[i].Request, w) {
			t.Errorf("request %d = %+v, want %+v", i, got[i].Request, w)
		}
	}
	// Routed by the group, not the transactional id.
	if l := clientTxnLookups(fc); !reflect.DeepEqual(l, []string{"0:group-4", "0:group-4"}) {
		t.Errorf("coordinator lookups = %q, want the group's", l)
	}
}

func clientTxnStr(s string) *string { return &s }

// Requests the Client cannot route fail without reaching any broker.
func TestClientTxnBadInput(t *testing.T) {
	fc, client := clientTxnFake(t)
	ctx := clientTxnCtx(t)
	noAddr := &Client{Transport: client.Transport}

	calls := map[string]func(c *Client) error{
		"AddPartitionsToTxn nil": func(c *Client) error { _, err := c.AddPartitionsToTxn(ctx, nil); return err },
		"AddPartitionsToTxn no id": func(c *Client) error {
			_, err := c.AddPartitionsToTxn(ctx, &AddPartitionsToTxnRequest{Topics: map[string][]AddPartitionToTxn{"a": {{}}}})
			return err
		},
		"AddOffsetsToTxn nil": func(c *Client) error { _, err := c.AddOffsetsToTxn(ctx, nil); return err },
		"AddOffsetsToTxn no id": func(c *Client) error {
			_, err := c.AddOffsetsToTxn(ctx, &AddOffsetsToTxnRequest{GroupID: "g"})
			return err
		},
		"EndTxn nil":          func(c *Client) error { _, err := c.EndTxn(ctx, nil); return err },
		"EndTxn no id":        func(c *Client) error { _, err := c.EndTxn(ctx, &EndTxnRequest{Committed: true}); return err },
		"TxnOffsetCommit nil": func(c *Client) error { _, err := c.TxnOffsetCommit(ctx, nil); return err },
		"TxnOffsetCommit no grp": func(c *Client) error {
			_, err := c.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{TransactionalID: "t"})
			return err
		},
	}
	for name, call := range calls {
		if err := call(client); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// No address anywhere.
	for name, call := range map[string]func() error{
		"AddPartitionsToTxn": func() error {
			_, err := noAddr.AddPartitionsToTxn(ctx, &AddPartitionsToTxnRequest{TransactionalID: "t"})
			return err
		},
		"AddOffsetsToTxn": func() error {
			_, err := noAddr.AddOffsetsToTxn(ctx, &AddOffsetsToTxnRequest{TransactionalID: "t", GroupID: "g"})
			return err
		},
		"EndTxn": func() error { _, err := noAddr.EndTxn(ctx, &EndTxnRequest{TransactionalID: "t"}); return err },
		"TxnOffsetCommit": func() error {
			_, err := noAddr.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{TransactionalID: "t", GroupID: "g"})
			return err
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "no address") {
			t.Errorf("%s without address: error %v, want one saying so", name, err)
		}
	}
	for _, b := range fc.Brokers() {
		for _, k := range []protocol.ApiKey{protocol.FindCoordinator, protocol.AddPartitionsToTxn, protocol.AddOffsetsToTxn, protocol.EndTxn, protocol.TxnOffsetCommit} {
			if n := b.Requests(k); n != 0 {
				t.Errorf("broker %d received %d %s requests", b.ID(), n, k)
			}
		}
	}

	// A request's own Addr takes precedence over the Client's (here none).
	fc.Broker(2).Handle(protocol.EndTxn, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.EndTxnResponse{}, fakebroker.Action{}
	})
	resp, err := noAddr.EndTxn(ctx, &EndTxnRequest{Addr: TCP(fc.Broker(3).Addr()), TransactionalID: "t"})
	if err != nil || resp.Error != nil {
		t.Fatalf("EndTxn with the request's Addr: %+v, %v", resp, err)
	}
}

// A coordinator that cannot be found, a coordinator that drops the
// connection, and one that does not answer within the Client's Timeout
// are the method's errors.
func TestClientTxnCoordinatorFailures(t *testing.T) {
	fc, client := clientTxnFake(t)
	ctx := clientTxnCtx(t)

	fc.Broker(1).ScriptNext(protocol.FindCoordinator, fakebroker.Step{ErrorCode: 15})
	_, err := client.EndTxn(ctx, &EndTxnRequest{TransactionalID: "tx", Committed: true})
	if !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("EndTxn with no coordinator: error %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	if err != nil && !strings.Contains(err.Error(), "EndTxn") {
		t.Errorf("error %q does not name the method", err)
	}

	fc.Broker(1).ScriptNext(protocol.FindCoordinator, fakebroker.Step{ErrorCode: 15})
	_, err = client.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{TransactionalID: "tx", GroupID: "g"})
	if !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("TxnOffsetCommit with no coordinator: error %v, want COORDINATOR_NOT_AVAILABLE", err)
	}

	fc.Broker(2).ScriptNext(protocol.AddPartitionsToTxn, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	if _, err := client.AddPartitionsToTxn(ctx, &AddPartitionsToTxnRequest{TransactionalID: "tx"}); err == nil {
		t.Error("AddPartitionsToTxn on a dropped connection: no error")
	}

	hold := make(chan struct{})
	defer close(hold)
	fc.Broker(2).ScriptNext(protocol.AddOffsetsToTxn, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	quick := &Client{Addr: client.Addr, Timeout: 200 * time.Millisecond, Transport: &Transport{}}
	defer quick.Transport.(*Transport).CloseIdleConnections()
	_, err = quick.AddOffsetsToTxn(ctx, &AddOffsetsToTxnRequest{TransactionalID: "tx", GroupID: "g"})
	if err == nil {
		t.Error("AddOffsetsToTxn past the Client's Timeout: no error")
	}
}
