package kafka

import (
	"context"
	"encoding/json"
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

// clientACLModel is a small authorizer for the fake brokers: it stores ACLs
// and answers CreateAcls, DescribeAcls and DeleteAcls with Kafka's matching
// rules (Any matches every value, Match every pattern that applies to a
// name, a null string any string).
type clientACLModel struct {
	mu   sync.Mutex
	acls []protocol.CreateAclsRequestCreation
}

func (m *clientACLModel) install(b *fakebroker.Broker) {
	b.Handle(protocol.CreateAcls, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.create(req.(*protocol.CreateAclsRequest)), fakebroker.Action{}
	})
	b.Handle(protocol.DescribeAcls, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.describe(req.(*protocol.DescribeAclsRequest)), fakebroker.Action{}
	})
	b.Handle(protocol.DeleteAcls, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.delete(req.(*protocol.DeleteAclsRequest)), fakebroker.Action{}
	})
}

func (m *clientACLModel) create(r *protocol.CreateAclsRequest) *protocol.CreateAclsResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	resp := &protocol.CreateAclsResponse{}
	for _, c := range r.Creations {
		var res protocol.CreateAclsResponseResult
		switch {
		case c.ResourceType < 2 || c.ResourceType > 7,
			c.ResourcePatternType != 3 && c.ResourcePatternType != 4,
			c.Operation < 2, c.PermissionType < 2, c.Principal == "":
			msg := "invalid ACL"
			res = protocol.CreateAclsResponseResult{ErrorCode: int16(InvalidRequest), ErrorMessage: &msg}
		default:
			m.acls = append(m.acls, c)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

// clientACLFilter is the filter of a DescribeAcls or a DeleteAcls filter.
type clientACLFilter struct {
	resType, pattern, op, perm int8
	name, principal, host      *string
}

func (f clientACLFilter) matches(a protocol.CreateAclsRequestCreation) bool {
	str := func(want *string, got string) bool { return want == nil || *want == got }
	enum := func(want, got int8) bool { return want == 1 || want == got }
	if !enum(f.resType, a.ResourceType) || !enum(f.op, a.Operation) || !enum(f.perm, a.PermissionType) ||
		!str(f.principal, a.Principal) || !str(f.host, a.Host) {
		return false
	}
	switch f.pattern {
	case 1: // any
		return str(f.name, a.ResourceName)
	case 2: // match: every ACL that applies to the name
		if f.name == nil {
			return true
		}
		if a.ResourcePatternType == 4 {
			return strings.HasPrefix(*f.name, a.ResourceName)
		}
		return a.ResourceName == *f.name || a.ResourceName == "*"
	default:
		return f.pattern == a.ResourcePatternType && str(f.name, a.ResourceName)
	}
}

func (m *clientACLModel) describe(r *protocol.DescribeAclsRequest) *protocol.DescribeAclsResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := clientACLFilter{r.ResourceTypeFilter, r.PatternTypeFilter, r.Operation, r.PermissionType, r.ResourceNameFilter, r.PrincipalFilter, r.HostFilter}
	resp := &protocol.DescribeAclsResponse{}
	index := map[[3]string]int{}
	for _, a := range m.acls {
		if !f.matches(a) {
			continue
		}
		key := [3]string{string(rune(a.ResourceType)), a.ResourceName, string(rune(a.ResourcePatternType))}
		i, ok := index[key]
		if !ok {
			i = len(resp.Resources)
			index[key] = i
			resp.Resources = append(resp.Resources, protocol.DescribeAclsResponseResource{
				ResourceType: a.ResourceType, ResourceName: a.ResourceName, PatternType: a.ResourcePatternType,
			})
		}
		resp.Resources[i].Acls = append(resp.Resources[i].Acls, protocol.DescribeAclsResponseAcl{
			Principal: a.Principal, Host: a.Host, Operation: a.Operation, PermissionType: a.PermissionType,
		})
	}
	return resp
}

func (m *clientACLModel) delete(r *protocol.DeleteAclsRequest) *protocol.DeleteAclsResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	resp := &protocol.DeleteAclsResponse{}
	for _, rf := range r.Filters {
		f := clientACLFilter{rf.ResourceTypeFilter, rf.PatternTypeFilter, rf.Operation, rf.PermissionType, rf.ResourceNameFilter, rf.PrincipalFilter, rf.HostFilter}
		var res protocol.DeleteAclsResponseFilterResult
		kept := m.acls[:0:0]
		for _, a := range m.acls {
			if !f.matches(a) {
				kept = append(kept, a)
				continue
			}
			res.MatchingAcls = append(res.MatchingAcls, protocol.DeleteAclsResponseMatchingAcl{
				ResourceType: a.ResourceType, ResourceName: a.ResourceName, PatternType: a.ResourcePatternType,
				Principal: a.Principal, Host: a.Host, Operation: a.Operation, PermissionType: a.PermissionType,
			})
		}
		m.acls = kept
		resp.FilterResults = append(resp.FilterResults, res)
	}
	return resp
}

// clientACLFake starts a 3-broker fake cluster whose controller (broker 1)
// runs the ACL model, and a Client that only knows broker 3.
func clientACLFake(t *testing.T) (*fakebroker.Cluster, *Client) {
	t.Helper()
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	new(clientACLModel).install(cl.Broker(1))
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return cl, &Client{Addr: TCP(cl.Broker(3).Addr()), Transport: tr}
}

func clientACLCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientACLOnlyAt checks that requests of kind key reached broker id only.
func clientACLOnlyAt(t *testing.T, cl *fakebroker.Cluster, key protocol.ApiKey, id int32) {
	t.Helper()
	for _, b := range cl.Brokers() {
		n := b.Requests(key)
		if b.ID() == id && n == 0 {
			t.Errorf("%s never reached broker %d", key, id)
		}
		if b.ID() != id && n != 0 {
			t.Errorf("%s reached broker %d %d times; only broker %d should get it", key, b.ID(), n, id)
		}
	}
}

var clientACLSamples = []ACLEntry{
	{ResourceType: ResourceTypeTopic, ResourceName: "orders", ResourcePatternType: PatternTypeLiteral, Principal: "User:alice", Host: "*", Operation: ACLOperationTypeRead, PermissionType: ACLPermissionTypeAllow},
	{ResourceType: ResourceTypeTopic, ResourceName: "orders", ResourcePatternType: PatternTypeLiteral, Principal: "User:bob", Host: "10.0.0.1", Operation: ACLOperationTypeWrite, PermissionType: ACLPermissionTypeDeny},
	{ResourceType: ResourceTypeGroup, ResourceName: "app-", ResourcePatternType: PatternTypePrefixed, Principal: "User:alice", Host: "*", Operation: ACLOperationTypeAll, PermissionType: ACLPermissionTypeAllow},
	{ResourceType: ResourceTypeCluster, ResourceName: "kafka-cluster", ResourcePatternType: PatternTypeLiteral, Principal: "User:admin", Host: "*", Operation: ACLOperationTypeAlter, PermissionType: ACLPermissionTypeAllow},
}

// clientACLFlatten lists the ACLs of a describe answer as entries, sorted.
func clientACLFlatten(res []ACLResource) []ACLEntry {
	var out []ACLEntry
	for _, r := range res {
		for _, a := range r.ACLs {
			out = append(out, ACLEntry{r.ResourceType, r.ResourceName, r.PatternType, a.Principal, a.Host, a.Operation, a.PermissionType})
		}
	}
	clientACLSort(out)
	return out
}

func clientACLSort(acls []ACLEntry) {
	sort.Slice(acls, func(i, j int) bool {
		a, b := acls[i], acls[j]
		if a.ResourceName != b.ResourceName {
			return a.ResourceName < b.ResourceName
		}
		return a.Principal < b.Principal
	})
}

func TestClientACLCreateDescribeDelete(t *testing.T) {
	cl, c := clientACLFake(t)
	ctx := clientACLCtx(t)

	created, err := c.CreateACLs(ctx, &CreateACLsRequest{ACLs: clientACLSamples})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Errors) != len(clientACLSamples) {
		t.Fatalf("%d errors for %d ACLs", len(created.Errors), len(clientACLSamples))
	}
	for i, e := range created.Errors {
		if e != nil {
			t.Errorf("ACL %d: %v", i, e)
		}
	}

	all, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeAny, ResourcePatternTypeFilter: PatternTypeAny,
		Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}})
	if err != nil || all.Error != nil {
		t.Fatalf("describe: %v, %v", err, all.Error)
	}
	want := append([]ACLEntry(nil), clientACLSamples...)
	clientACLSort(want)
	if got := clientACLFlatten(all.Resources); !reflect.DeepEqual(got, want) {
		t.Fatalf("described\n%+v\nwant\n%+v", got, want)
	}
	if len(all.Resources) != 3 {
		t.Errorf("%d resources, want 3 (the two topic ACLs share one)", len(all.Resources))
	}

	// Filters: empty strings match anything; Match finds prefixed ACLs
	// that apply to a name.
	byPrincipal, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeAny, ResourcePatternTypeFilter: PatternTypeAny, PrincipalFilter: "User:alice",
		Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := clientACLFlatten(byPrincipal.Resources); len(got) != 2 || got[0].ResourceName != "app-" || got[1].ResourceName != "orders" {
		t.Errorf("alice's ACLs: %+v", got)
	}
	matching, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeGroup, ResourceNameFilter: "app-payments", ResourcePatternTypeFilter: PatternTypeMatch,
		Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(matching.Resources) != 1 || matching.Resources[0].PatternType != PatternTypePrefixed || matching.Resources[0].ACLs[0].Operation != ACLOperationTypeAll {
		t.Errorf("ACLs applying to group app-payments: %+v", matching.Resources)
	}

	// Delete: one filter per result, each listing what it matched.
	deleted, err := c.DeleteACLs(ctx, &DeleteACLsRequest{Filters: []DeleteACLsFilter{
		{ResourceTypeFilter: ResourceTypeTopic, ResourceNameFilter: "orders", ResourcePatternTypeFilter: PatternTypeLiteral,
			PrincipalFilter: "User:bob", Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny},
		{ResourceTypeFilter: ResourceTypeTopic, ResourceNameFilter: "nothing", ResourcePatternTypeFilter: PatternTypeAny,
			Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted.Results) != 2 || deleted.Results[0].Error != nil || len(deleted.Results[1].MatchingACLs) != 0 {
		t.Fatalf("delete results: %+v", deleted.Results)
	}
	wantDeleted := []DeleteACLsMatchingACLs{{
		ResourceType: ResourceTypeTopic, ResourceName: "orders", ResourcePatternType: PatternTypeLiteral,
		Principal: "User:bob", Host: "10.0.0.1", Operation: ACLOperationTypeWrite, PermissionType: ACLPermissionTypeDeny,
	}}
	if !reflect.DeepEqual(deleted.Results[0].MatchingACLs, wantDeleted) {
		t.Errorf("deleted %+v, want %+v", deleted.Results[0].MatchingACLs, wantDeleted)
	}
	after, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeTopic, ResourcePatternTypeFilter: PatternTypeAny,
		Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := clientACLFlatten(after.Resources); len(got) != 1 || got[0].Principal != "User:alice" {
		t.Errorf("topic ACLs after the delete: %+v", got)
	}

	// Every request went to the controller (broker 1), though the Client
	// only knew broker 3.
	for _, k := range []protocol.ApiKey{protocol.CreateAcls, protocol.DescribeAcls, protocol.DeleteAcls} {
		clientACLOnlyAt(t, cl, k, 1)
	}
}

// The wire request carries the filter as given: "" as null, enums as codes.
func TestClientACLRequestEncoding(t *testing.T) {
	cl, c := clientACLFake(t)
	ctx := clientACLCtx(t)
	_, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeTransactionalID, ResourceNameFilter: "tx", ResourcePatternTypeFilter: PatternTypePrefixed,
		HostFilter: "h", Operation: ACLOperationTypeIdempotentWrite, PermissionType: ACLPermissionTypeDeny,
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := cl.Broker(1).Received(protocol.DescribeAcls)
	if len(got) != 1 {
		t.Fatalf("%d DescribeAcls requests", len(got))
	}
	r := got[0].Request.(*protocol.DescribeAclsRequest)
	if r.ResourceTypeFilter != 5 || r.ResourceNameFilter == nil || *r.ResourceNameFilter != "tx" || r.PatternTypeFilter != 4 ||
		r.PrincipalFilter != nil || r.HostFilter == nil || *r.HostFilter != "h" || r.Operation != 12 || r.PermissionType != 2 {
		t.Errorf("request %+v", r)
	}
	if v := got[0].Header.Version; v != 3 {
		t.Errorf("DescribeAcls v%d, want v3 (the highest both speak)", v)
	}
}

// An older broker gets the classic (non-flexible) encoding.
func TestClientACLOldVersions(t *testing.T) {
	cl, c := clientACLFake(t)
	ctx := clientACLCtx(t)
	for _, k := range []protocol.ApiKey{protocol.CreateAcls, protocol.DescribeAcls, protocol.DeleteAcls} {
		for _, b := range cl.Brokers() {
			b.SetMaxVersion(k, 1)
		}
	}
	created, err := c.CreateACLs(ctx, &CreateACLsRequest{ACLs: clientACLSamples[:1]})
	if err != nil || len(created.Errors) != 1 || created.Errors[0] != nil {
		t.Fatalf("create at v1: %v %+v", err, created)
	}
	described, err := c.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeAny, ResourcePatternTypeFilter: PatternTypeAny, Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}})
	if err != nil || !reflect.DeepEqual(clientACLFlatten(described.Resources), clientACLSamples[:1]) {
		t.Fatalf("describe at v1: %v %+v", err, described)
	}
	deleted, err := c.DeleteACLs(ctx, &DeleteACLsRequest{Filters: []DeleteACLsFilter{{
		ResourceTypeFilter: ResourceTypeAny, ResourcePatternTypeFilter: PatternTypeAny, Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
	}}})
	if err != nil || len(deleted.Results) != 1 || len(deleted.Results[0].MatchingACLs) != 1 {
		t.Fatalf("delete at v1: %v %+v", err, deleted)
	}
	for _, k := range []protocol.ApiKey{protocol.CreateAcls, protocol.DescribeAcls, protocol.DeleteAcls} {
		for _, r := range cl.Broker(1).Received(k) {
			if r.Header.Version != 1 {
				t.Errorf("%s sent at v%d, want v1", k, r.Header.Version)
			}
		}
	}
}

// Broker errors land in the responses, with their messages; the methods
// themselves succeed.
func TestClientACLBrokerErrors(t *testing.T) {
	cl, c := clientACLFake(t)
	ctx := clientACLCtx(t)

	// An invalid entry fails alone.
	created, err := c.CreateACLs(ctx, &CreateACLsRequest{ACLs: []ACLEntry{
		clientACLSamples[0],
		{ResourceType: ResourceTypeAny, ResourceName: "x", ResourcePatternType: PatternTypeLiteral, Principal: "User:x", Host: "*", Operation: ACLOperationTypeRead, PermissionType: ACLPermissionTypeAllow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Errors) != 2 || created.Errors[0] != nil || !errors.Is(created.Errors[1], InvalidRequest) ||
		!strings.Contains(created.Errors[1].Error(), "invalid ACL") {
		t.Fatalf("create errors: %v", created.Errors)
	}

	// A cluster without an authorizer: SecurityDisabled everywhere.
	secOff := "No Authorizer is configured"
	ctrl := cl.Broker(1)
	ctrl.Handle(protocol.CreateAcls, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.CreateAclsResponse{ThrottleTimeMs: 250, Results: []protocol.CreateAclsResponseResult{{ErrorCode: int16(SecurityDisabled), ErrorMessage: &secOff}}}, fakebroker.Action{}
	})
	ctrl.Handle(protocol.DescribeAcls, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.DescribeAclsResponse{ThrottleTimeMs: 7, ErrorCode: int16(SecurityDisabled), ErrorMessage: &secOff}, fakebroker.Action{}
	})
	denied := "not allowed"
	ctrl.Handle(protocol.DeleteAcls, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.DeleteAclsResponse{FilterResults: []protocol.DeleteAclsResponseFilterResult{
			{ErrorCode: int16(SecurityDisabled), ErrorMessage: &secOff},
			{MatchingAcls: []protocol.DeleteAclsResponseMatchingAcl{{ErrorCode: int16(ClusterAuthorizationFailed), ErrorMessage: &denied, ResourceType: 4, ResourceName: "kafka-cluster", PatternType: 3, Principal: "User:a", Host: "*", Operation: 7, PermissionType: 3}}},
		}}, fakebroker.Action{}
	})

	created, err = c.CreateACLs(ctx, &CreateACLsRequest{ACLs: clientACLSamples[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if created.Throttle != 250*time.Millisecond || len(created.Errors) != 1 || !errors.Is(created.Errors[0], SecurityDisabled) ||
		!strings.Contains(created.Errors[0].Error(), secOff) {
		t.Errorf("create: %+v", created)
	}
	described, err := c.DescribeACLs(ctx, &DescribeACLsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if described.Throttle != 7*time.Millisecond || !errors.Is(described.Error, SecurityDisabled) || len(described.Resources) != 0 {
		t.Errorf("describe: %+v", described)
	}
	deleted, err := c.DeleteACLs(ctx, &DeleteACLsRequest{Filters: make([]DeleteACLsFilter, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted.Results) != 2 || !errors.Is(deleted.Results[0].Error, SecurityDisabled) || deleted.Results[1].Error != nil {
		t.Fatalf("delete: %+v", deleted)
	}
	m := deleted.Results[1].MatchingACLs
	if len(m) != 1 || !errors.Is(m[0].Error, ClusterAuthorizationFailed) || m[0].ResourceType != ResourceTypeCluster ||
		m[0].Operation != ACLOperationTypeAlter || m[0].PermissionType != ACLPermissionTypeAllow {
		t.Errorf("matching ACL: %+v", m)
	}
}

// Requests that cannot be sent or answered fail the method itself.
func TestClientACLBadInput(t *testing.T) {
	cl, c := clientACLFake(t)
	ctx := clientACLCtx(t)

	if _, err := c.CreateACLs(ctx, nil); err == nil {
		t.Error("CreateACLs(nil): no error")
	}
	if _, err := c.DescribeACLs(ctx, nil); err == nil {
		t.Error("DescribeACLs(nil): no error")
	}
	if _, err := c.DeleteACLs(ctx, nil); err == nil {
		t.Error("DeleteACLs(nil): no error")
	}
	noAddr := &Client{Transport: c.Transport}
	if _, err := noAddr.DescribeACLs(ctx, &DescribeACLsRequest{}); err == nil || !strings.Contains(err.Error(), "DescribeACLs") {
		t.Errorf("no address: %v", err)
	}
	// The request's Addr wins over the Client's.
	other := fakebroker.NewCluster(t, fakebroker.Config{})
	new(clientACLModel).install(other.Broker(1))
	if _, err := noAddr.CreateACLs(ctx, &CreateACLsRequest{Addr: TCP(other.Broker(1).Addr()), ACLs: clientACLSamples[:1]}); err != nil {
		t.Fatal(err)
	}
	if other.Broker(1).Requests(protocol.CreateAcls) != 1 {
		t.Error("the request's Addr was not used")
	}

	// No ACLs: an empty request, an empty answer.
	created, err := c.CreateACLs(ctx, &CreateACLsRequest{})
	if err != nil || len(created.Errors) != 0 {
		t.Errorf("empty create: %v %+v", err, created)
	}

	// The controller drops the connection: the method fails, naming itself.
	cl.Broker(1).Handle(protocol.DeleteAcls, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.DeleteACLs(short, &DeleteACLsRequest{Filters: make([]DeleteACLsFilter, 1)}); err == nil || !strings.Contains(err.Error(), "DeleteACLs") {
		t.Errorf("closed connection: %v", err)
	}

	// The Client's Timeout bounds a request the broker never answers.
	hold := make(chan struct{})
	defer close(hold)
	cl.Broker(1).Handle(protocol.DescribeAcls, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.DescribeAclsResponse{}, fakebroker.Action{Wait: hold}
	})
	quick := &Client{Addr: c.Addr, Transport: c.Transport, Timeout: 200 * time.Millisecond}
	if _, err := quick.DescribeACLs(ctx, &DescribeACLsRequest{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("held answer: %v, want a deadline error", err)
	}
}

func TestClientACLEnumText(t *testing.T) {
	type texter interface {
		String() string
		MarshalText() ([]byte, error)
	}
	cases := []struct {
		v    texter
		name string
	}{
		{ResourceTypeUnknown, "Unknown"}, {ResourceTypeAny, "Any"}, {ResourceTypeTopic, "Topic"}, {ResourceTypeGroup, "Group"},
		{ResourceTypeBroker, "Cluster"}, {ResourceTypeCluster, "Cluster"}, {ResourceTypeTransactionalID, "Transactionalid"},
		{ResourceTypeDelegationToken, "Delegationtoken"}, {ResourceType(42), "Unknown"},
		{PatternTypeUnknown, "Unknown"}, {PatternTypeAny, "Any"}, {PatternTypeMatch, "Match"}, {PatternTypeLiteral, "Literal"},
		{PatternTypePrefixed, "Prefixed"}, {PatternType(-1), "Unknown"},
		{ACLPermissionTypeUnknown, "Unknown"}, {ACLPermissionTypeAny, "Any"}, {ACLPermissionTypeDeny, "Deny"},
		{ACLPermissionTypeAllow, "Allow"}, {ACLPermissionType(9), "Unknown"},
		{ACLOperationTypeUnknown, "Unknown"}, {ACLOperationTypeAny, "Any"}, {ACLOperationTypeAll, "All"},
		{ACLOperationTypeRead, "Read"}, {ACLOperationTypeWrite, "Write"}, {ACLOperationTypeCreate, "Create"},
		{ACLOperationTypeDelete, "Delete"}, {ACLOperationTypeAlter, "Alter"}, {ACLOperationTypeDescribe, "Describe"},
		{ACLOperationTypeClusterAction, "ClusterAction"}, {ACLOperationTypeDescribeConfigs, "DescribeConfigs"},
		{ACLOperationTypeAlterConfigs, "AlterConfigs"}, {ACLOperationTypeIdempotentWrite, "IdempotentWrite"},
		{ACLOperationType(13), "Unknown"}, {ACLOperationType(-3), "Unknown"},
	}
	for _, tc := range cases {
		if s := tc.v.String(); s != tc.name {
			t.Errorf("%T(%v).String() = %q, want %q", tc.v, tc.v, s, tc.name)
		}
		if b, err := tc.v.MarshalText(); err != nil || string(b) != tc.name {
			t.Errorf("%T MarshalText = %q, %v", tc.v, b, err)
		}
	}

	// Parsing ignores case; "broker" is the cluster's code; unknown names
	// fail and leave the Unknown value.
	var rt ResourceType
	for in, want := range map[string]ResourceType{"TOPIC": ResourceTypeTopic, "broker": ResourceTypeBroker, "Cluster": ResourceTypeCluster,
		"transactionalId": ResourceTypeTransactionalID, "delegationtoken": ResourceTypeDelegationToken, "any": ResourceTypeAny, "unknown": ResourceTypeUnknown, "group": ResourceTypeGroup} {
		if err := rt.UnmarshalText([]byte(in)); err != nil || rt != want {
			t.Errorf("ResourceType %q: %v, %v", in, rt, err)
		}
	}
	rt = ResourceTypeTopic
	if err := rt.UnmarshalText([]byte("table")); err == nil || rt != ResourceTypeUnknown {
		t.Errorf("ResourceType table: %v, %v", rt, err)
	}
	var pt PatternType
	for _, want := range []PatternType{PatternTypeUnknown, PatternTypeAny, PatternTypeMatch, PatternTypeLiteral, PatternTypePrefixed} {
		if err := pt.UnmarshalText([]byte(strings.ToUpper(want.String()))); err != nil || pt != want {
			t.Errorf("PatternType %v: %v, %v", want, pt, err)
		}
	}
	if err := pt.UnmarshalText([]byte("regex")); err == nil || pt != PatternTypeUnknown {
		t.Errorf("PatternType regex: %v, %v", pt, err)
	}
	var perm ACLPermissionType
	for _, want := range []ACLPermissionType{ACLPermissionTypeUnknown, ACLPermissionTypeAny, ACLPermissionTypeDeny, ACLPermissionTypeAllow} {
		if err := perm.UnmarshalText([]byte(strings.ToLower(want.String()))); err != nil || perm != want {
			t.Errorf("ACLPermissionType %v: %v, %v", want, perm, err)
		}
	}
	if err := perm.UnmarshalText([]byte("maybe")); err == nil || perm != ACLPermissionTypeUnknown {
		t.Errorf("ACLPermissionType maybe: %v, %v", perm, err)
	}
	var op ACLOperationType
	for code := ACLOperationTypeUnknown; code <= ACLOperationTypeIdempotentWrite; code++ {
		if err := op.UnmarshalText([]byte(strings.ToUpper(code.String()))); err != nil || op != code {
			t.Errorf("ACLOperationType %v: %v, %v", code, op, err)
		}
	}
	if err := op.UnmarshalText([]byte("fly")); err == nil || op != ACLOperationTypeUnknown {
		t.Errorf("ACLOperationType fly: %v, %v", op, err)
	}

	// The names make the entries readable JSON, and parse back.
	b, err := json.Marshal(clientACLSamples[2])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ResourceType":"Group","ResourceName":"app-","ResourcePatternType":"Prefixed","Principal":"User:alice","Host":"*","Operation":"All","PermissionType":"Allow"}`
	if string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
	var back ACLEntry
	if err := json.Unmarshal(b, &back); err != nil || back != clientACLSamples[2] {
		t.Errorf("JSON back: %+v, %v", back, err)
	}
}
