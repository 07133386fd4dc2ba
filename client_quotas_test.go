package kafka

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientQuotasModel stores quotas per entity for the fake controller and
// answers DescribeClientQuotas and AlterClientQuotas like Kafka.
type clientQuotasModel struct {
	mu     sync.Mutex
	quotas map[string]map[string]float64 // entity key -> quota -> value
	ents   map[string][]protocol.ClientQuotasEntity
}

func clientQuotasKey(ents []protocol.ClientQuotasEntity) string {
	parts := make([]string, len(ents))
	for i, e := range ents {
		name := "<default>"
		if e.EntityName != nil {
			name = "=" + *e.EntityName
		}
		parts[i] = e.EntityType + name
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (m *clientQuotasModel) install(b *fakebroker.Broker) {
	m.quotas = map[string]map[string]float64{}
	m.ents = map[string][]protocol.ClientQuotasEntity{}
	b.Handle(protocol.AlterClientQuotas, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.alter(req.(*protocol.AlterClientQuotasRequest)), fakebroker.Action{}
	})
	b.Handle(protocol.DescribeClientQuotas, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.describe(req.(*protocol.DescribeClientQuotasRequest)), fakebroker.Action{}
	})
}

func (m *clientQuotasModel) alter(r *protocol.AlterClientQuotasRequest) *protocol.AlterClientQuotasResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	resp := &protocol.AlterClientQuotasResponse{}
	for _, ent := range r.Entries {
		out := protocol.AlterClientQuotasResponseEntry{Entity: ent.Entity}
		for _, op := range ent.Ops {
			if !strings.HasSuffix(op.Key, "_rate") && op.Key != "request_percentage" {
				msg := "unknown quota key " + op.Key
				out.ErrorCode, out.ErrorMessage = int16(InvalidRequest), &msg
			}
		}
		if out.ErrorCode == 0 && !r.ValidateOnly {
			key := clientQuotasKey(ent.Entity)
			if m.quotas[key] == nil {
				m.quotas[key] = map[string]float64{}
				m.ents[key] = ent.Entity
			}
			for _, op := range ent.Ops {
				if op.Remove {
					delete(m.quotas[key], op.Key)
				} else {
					m.quotas[key][op.Key] = op.Value
				}
			}
			if len(m.quotas[key]) == 0 {
				delete(m.quotas, key)
			}
		}
		resp.Entries = append(resp.Entries, out)
	}
	return resp
}

func (m *clientQuotasModel) describe(r *protocol.DescribeClientQuotasRequest) *protocol.DescribeClientQuotasResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	resp := &protocol.DescribeClientQuotasResponse{}
	keys := make([]string, 0, len(m.quotas))
	for k := range m.quotas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		ents := m.ents[key]
		if !clientQuotasMatch(r, ents) {
			continue
		}
		entry := protocol.DescribeClientQuotasResponseEntry{Entity: ents}
		names := make([]string, 0, len(m.quotas[key]))
		for q := range m.quotas[key] {
			names = append(names, q)
		}
		sort.Strings(names)
		for _, q := range names {
			entry.Values = append(entry.Values, protocol.DescribeClientQuotasResponseValue{Key: q, Value: m.quotas[key][q]})
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp
}

func clientQuotasMatch(r *protocol.DescribeClientQuotasRequest, ents []protocol.ClientQuotasEntity) bool {
	for _, c := range r.Components {
		found := false
		for _, e := range ents {
			if e.EntityType != c.EntityType {
				continue
			}
			switch c.MatchType {
			case 0:
				found = e.EntityName != nil && c.Match != nil && *e.EntityName == *c.Match
			case 1:
				found = e.EntityName == nil
			case 2:
				found = e.EntityName != nil
			}
		}
		if !found {
			return false
		}
	}
	return !r.Strict || len(ents) == len(r.Components)
}

func clientQuotasFake(t *testing.T) (*fakebroker.Cluster, *Client, context.Context) {
	t.Helper()
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	new(clientQuotasModel).install(cl.Broker(1))
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return cl, &Client{Addr: TCP(cl.Broker(2).Addr()), Transport: tr}, ctx
}

func TestClientQuotasAlterDescribe(t *testing.T) {
	cl, c, ctx := clientQuotasFake(t)

	altered, err := c.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
		{
			Entities: []AlterClientQuotaEntity{{EntityType: "user", EntityName: "alice"}},
			Ops:      []AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 1048576}, {Key: "consumer_byte_rate", Value: 2.5e6}},
		},
		{
			Entities: []AlterClientQuotaEntity{{EntityType: "user"}}, // the default user
			Ops:      []AlterClientQuotaOps{{Key: "request_percentage", Value: 50}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantAltered := []AlterClientQuotaResponseQuotas{
		{Entities: []AlterClientQuotaEntity{{EntityType: "user", EntityName: "alice"}}},
		{Entities: []AlterClientQuotaEntity{{EntityType: "user"}}},
	}
	if !reflect.DeepEqual(altered.Entries, wantAltered) {
		t.Fatalf("altered %+v\nwant %+v", altered.Entries, wantAltered)
	}
	// The default entity went on the wire as a null name.
	if r := cl.Broker(1).Received(protocol.AlterClientQuotas); len(r) != 1 || r[0].Request.(*protocol.AlterClientQuotasRequest).Entries[1].Entity[0].EntityName != nil {
		t.Errorf("default entity not sent as null: %+v", r)
	}

	alice, err := c.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{Components: []DescribeClientQuotasRequestComponent{
		{EntityType: "user", MatchType: 0, Match: "alice"},
	}})
	if err != nil || alice.Error != nil {
		t.Fatalf("describe alice: %v %v", err, alice.Error)
	}
	wantAlice := []DescribeClientQuotasResponseQuotas{{
		Entities: []DescribeClientQuotasEntity{{EntityType: "user", EntityName: "alice"}},
		Values:   []DescribeClientQuotasValue{{Key: "consumer_byte_rate", Value: 2.5e6}, {Key: "producer_byte_rate", Value: 1048576}},
	}}
	if !reflect.DeepEqual(alice.Entries, wantAlice) {
		t.Errorf("alice: %+v\nwant %+v", alice.Entries, wantAlice)
	}
	defaults, err := c.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{Components: []DescribeClientQuotasRequestComponent{
		{EntityType: "user", MatchType: 1},
	}, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(defaults.Entries) != 1 || defaults.Entries[0].Entities[0] != (DescribeClientQuotasEntity{EntityType: "user"}) ||
		defaults.Entries[0].Values[0] != (DescribeClientQuotasValue{Key: "request_percentage", Value: 50}) {
		t.Errorf("default user: %+v", defaults.Entries)
	}

	// Remove alice's quotas; validate-only changes nothing.
	if _, err := c.AlterClientQuotas(ctx, &AlterClientQuotasRequest{ValidateOnly: true, Entries: []AlterClientQuotaEntry{{
		Entities: []AlterClientQuotaEntity{{EntityType: "user", EntityName: "bob"}}, Ops: []AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 1}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{{
		Entities: []AlterClientQuotaEntity{{EntityType: "user", EntityName: "alice"}},
		Ops:      []AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}, {Key: "consumer_byte_rate", Remove: true}},
	}}}); err != nil {
		t.Fatal(err)
	}
	named, err := c.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{Components: []DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(named.Entries) != 0 {
		t.Errorf("named users left: %+v", named.Entries)
	}

	for _, k := range []protocol.ApiKey{protocol.AlterClientQuotas, protocol.DescribeClientQuotas} {
		clientACLOnlyAt(t, cl, k, 1)
	}
}

func TestClientQuotasErrors(t *testing.T) {
	cl, c, ctx := clientQuotasFake(t)

	altered, err := c.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
		{Entities: []AlterClientQuotaEntity{{EntityType: "client-id", EntityName: "app"}}, Ops: []AlterClientQuotaOps{{Key: "bogus", Value: 1}}},
		{Entities: []AlterClientQuotaEntity{{EntityType: "client-id", EntityName: "ok"}}, Ops: []AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 1}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(altered.Entries) != 2 || !errors.Is(altered.Entries[0].Error, InvalidRequest) ||
		!strings.Contains(altered.Entries[0].Error.Error(), "bogus") || altered.Entries[1].Error != nil {
		t.Errorf("alter errors: %+v", altered.Entries)
	}

	// A request-level error: Error set, no entries, the method succeeds.
	msg := "bad filter"
	cl.Broker(1).Handle(protocol.DescribeClientQuotas, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.DescribeClientQuotasResponse{ThrottleTimeMs: 30, ErrorCode: int16(InvalidRequest), ErrorMessage: &msg}, fakebroker.Action{}
	})
	described, err := c.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(described.Error, InvalidRequest) || !strings.Contains(described.Error.Error(), msg) ||
		described.Throttle != 30*time.Millisecond || len(described.Entries) != 0 {
		t.Errorf("describe: %+v", described)
	}

	if _, err := c.DescribeClientQuotas(ctx, nil); err == nil {
		t.Error("DescribeClientQuotas(nil): no error")
	}
	if _, err := c.AlterClientQuotas(ctx, nil); err == nil {
		t.Error("AlterClientQuotas(nil): no error")
	}
	cl.Broker(1).Handle(protocol.AlterClientQuotas, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.AlterClientQuotas(short, &AlterClientQuotasRequest{}); err == nil || !strings.Contains(err.Error(), "AlterClientQuotas") {
		t.Errorf("closed connection: %v", err)
	}
	if _, err := (&Client{Transport: c.Transport}).DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{}); err == nil {
		t.Error("no address: no error")
	}
}

// v0 of both messages is the classic encoding.
func TestClientQuotasVersion0(t *testing.T) {
	cl, c, ctx := clientQuotasFake(t)
	for _, b := range cl.Brokers() {
		b.SetMaxVersion(protocol.AlterClientQuotas, 0)
		b.SetMaxVersion(protocol.DescribeClientQuotas, 0)
	}
	if _, err := c.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{{
		Entities: []AlterClientQuotaEntity{{EntityType: "ip", EntityName: "10.1.2.3"}}, Ops: []AlterClientQuotaOps{{Key: "connection_creation_rate", Value: 10}},
	}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{Components: []DescribeClientQuotasRequestComponent{{EntityType: "ip", Match: "10.1.2.3"}}})
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Values[0].Value != 10 {
		t.Fatalf("v0: %v %+v", err, res)
	}
	for _, k := range []protocol.ApiKey{protocol.AlterClientQuotas, protocol.DescribeClientQuotas} {
		for _, r := range cl.Broker(1).Received(k) {
			if r.Header.Version != 0 {
				t.Errorf("%s at v%d, want v0", k, r.Header.Version)
			}
		}
	}
}
