package kafka

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientScramModel keeps SCRAM credentials for the fake controller, with
// Kafka's rules: at least 4096 iterations, a known mechanism, deleting a
// missing credential is ResourceNotFound, as is describing a user without
// credentials.
type clientScramModel struct {
	mu    sync.Mutex
	users map[string]map[int8]protocol.AlterUserScramCredentialsRequestUpsertion
}

func (m *clientScramModel) install(b *fakebroker.Broker) {
	m.users = map[string]map[int8]protocol.AlterUserScramCredentialsRequestUpsertion{}
	b.Handle(protocol.AlterUserScramCredentials, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.alter(req.(*protocol.AlterUserScramCredentialsRequest)), fakebroker.Action{}
	})
	b.Handle(protocol.DescribeUserScramCredentials, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return m.describe(req.(*protocol.DescribeUserScramCredentialsRequest)), fakebroker.Action{}
	})
}

func (m *clientScramModel) alter(r *protocol.AlterUserScramCredentialsRequest) *protocol.AlterUserScramCredentialsResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs := map[string]int16{}
	var order []string
	note := func(user string, code int16) {
		if _, seen := errs[user]; !seen {
			order = append(order, user)
		}
		if errs[user] == 0 {
			errs[user] = code
		}
	}
	for _, d := range r.Deletions {
		if _, ok := m.users[d.Name][d.Mechanism]; !ok {
			note(d.Name, int16(ResourceNotFound))
			continue
		}
		delete(m.users[d.Name], d.Mechanism)
		note(d.Name, 0)
	}
	for _, u := range r.Upsertions {
		if u.Mechanism != 1 && u.Mechanism != 2 || u.Iterations < 4096 || len(u.Salt) == 0 || len(u.SaltedPassword) == 0 {
			note(u.Name, int16(UnacceptableCredential))
			continue
		}
		if m.users[u.Name] == nil {
			m.users[u.Name] = map[int8]protocol.AlterUserScramCredentialsRequestUpsertion{}
		}
		m.users[u.Name][u.Mechanism] = u
		note(u.Name, 0)
	}
	resp := &protocol.AlterUserScramCredentialsResponse{}
	for _, user := range order {
		res := protocol.AlterUserScramCredentialsResponseResult{User: user, ErrorCode: errs[user]}
		if res.ErrorCode != 0 {
			msg := "refused for " + user
			res.ErrorMessage = &msg
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

func (m *clientScramModel) describe(r *protocol.DescribeUserScramCredentialsRequest) *protocol.DescribeUserScramCredentialsResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	users := r.Users
	if users == nil {
		for u, creds := range m.users {
			if len(creds) > 0 {
				users = append(users, u)
			}
		}
		sort.Strings(users)
	}
	resp := &protocol.DescribeUserScramCredentialsResponse{}
	for _, u := range users {
		res := protocol.DescribeUserScramCredentialsResponseResult{User: u}
		if len(m.users[u]) == 0 {
			msg := "no credentials for " + u
			res.ErrorCode, res.ErrorMessage = int16(ResourceNotFound), &msg
		}
		for _, mech := range []int8{1, 2} {
			if c, ok := m.users[u][mech]; ok {
				res.CredentialInfos = append(res.CredentialInfos, protocol.DescribeUserScramCredentialsResponseCredential{Mechanism: mech, Iterations: c.Iterations})
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

func clientScramFake(t *testing.T) (*fakebroker.Cluster, *clientScramModel, *Client, context.Context) {
	t.Helper()
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	m := new(clientScramModel)
	m.install(cl.Broker(1))
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return cl, m, &Client{Addr: TCP(cl.Broker(3).Addr()), Transport: tr}, ctx
}

func TestClientScramAlterDescribe(t *testing.T) {
	cl, model, c, ctx := clientScramFake(t)
	salt, salted := []byte("0123456789abcdef"), bytes.Repeat([]byte{0xab}, 32)

	altered, err := c.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
		{Name: "alice", Mechanism: ScramMechanismSha256, Iterations: 8192, Salt: salt, SaltedPassword: salted},
		{Name: "alice", Mechanism: ScramMechanismSha512, Iterations: 4096, Salt: salt, SaltedPassword: bytes.Repeat([]byte{1}, 64)},
		{Name: "bob", Mechanism: ScramMechanismSha256, Iterations: 4096, Salt: salt, SaltedPassword: salted},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []AlterUserScramCredentialsResponseUser{{User: "alice"}, {User: "bob"}}; !reflect.DeepEqual(altered.Results, want) {
		t.Fatalf("alter results %+v, want %+v", altered.Results, want)
	}
	// Salt and salted password reach the broker byte for byte.
	model.mu.Lock()
	got := model.users["alice"][1]
	model.mu.Unlock()
	if got.Iterations != 8192 || !bytes.Equal(got.Salt, salt) || !bytes.Equal(got.SaltedPassword, salted) {
		t.Errorf("stored credential %+v", got)
	}

	described, err := c.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{Users: []UserScramCredentialsUser{{Name: "alice"}, {Name: "carol"}}})
	if err != nil || described.Error != nil {
		t.Fatalf("describe: %v %v", err, described.Error)
	}
	if len(described.Results) != 2 {
		t.Fatalf("results %+v", described.Results)
	}
	wantAlice := DescribeUserScramCredentialsResponseResult{User: "alice", CredentialInfos: []DescribeUserScramCredentialsCredentialInfo{
		{Mechanism: ScramMechanismSha256, Iterations: 8192}, {Mechanism: ScramMechanismSha512, Iterations: 4096},
	}}
	if !reflect.DeepEqual(described.Results[0], wantAlice) {
		t.Errorf("alice %+v, want %+v", described.Results[0], wantAlice)
	}
	if carol := described.Results[1]; carol.User != "carol" || !errors.Is(carol.Error, ResourceNotFound) || len(carol.CredentialInfos) != 0 {
		t.Errorf("carol %+v", carol)
	}

	// No users: every user, sent as a null array.
	everyone, err := c.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{})
	if err != nil || len(everyone.Results) != 2 || everyone.Results[0].User != "alice" || everyone.Results[1].User != "bob" {
		t.Fatalf("every user: %v %+v", err, everyone)
	}

	// Delete bob's only credential: bob disappears.
	deleted, err := c.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Deletions: []UserScramCredentialsDeletion{{Name: "bob", Mechanism: ScramMechanismSha256}}})
	if err != nil || len(deleted.Results) != 1 || deleted.Results[0] != (AlterUserScramCredentialsResponseUser{User: "bob"}) {
		t.Fatalf("delete bob: %v %+v", err, deleted)
	}
	bob, err := c.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{Users: []UserScramCredentialsUser{{Name: "bob"}}})
	if err != nil || len(bob.Results) != 1 || !errors.Is(bob.Results[0].Error, ResourceNotFound) {
		t.Errorf("bob after delete: %v %+v", err, bob)
	}

	for _, k := range []protocol.ApiKey{protocol.AlterUserScramCredentials, protocol.DescribeUserScramCredentials} {
		clientACLOnlyAt(t, cl, k, 1)
	}
	if r := cl.Broker(1).Received(protocol.DescribeUserScramCredentials); r[1].Request.(*protocol.DescribeUserScramCredentialsRequest).Users != nil {
		t.Error("an empty user list was not sent as null")
	}
}

func TestClientScramErrors(t *testing.T) {
	cl, _, c, ctx := clientScramFake(t)

	altered, err := c.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{
		Deletions:  []UserScramCredentialsDeletion{{Name: "ghost", Mechanism: ScramMechanismSha512}},
		Upsertions: []UserScramCredentialsUpsertion{{Name: "weak", Mechanism: ScramMechanismSha256, Iterations: 10, Salt: []byte("s"), SaltedPassword: []byte("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(altered.Results) != 2 || altered.Results[0].User != "ghost" || !errors.Is(altered.Results[0].Error, ResourceNotFound) ||
		altered.Results[1].User != "weak" || !errors.Is(altered.Results[1].Error, UnacceptableCredential) ||
		!strings.Contains(altered.Results[1].Error.Error(), "refused for weak") {
		t.Errorf("alter errors: %+v", altered.Results)
	}

	// Iteration counts the wire cannot carry fail before sending.
	if strconv.IntSize > 32 {
		var wide int64 = math.MaxInt32 + 4097 // a valid count once wrapped to int32
		if _, err := c.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
			{Name: "x", Mechanism: ScramMechanismSha256, Iterations: int(wide)},
		}}); err == nil {
			t.Error("iterations beyond int32: no error")
		}
	}
	if _, err := c.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
		{Name: "x", Mechanism: ScramMechanismSha256, Iterations: -1},
	}}); err == nil {
		t.Error("negative iterations: no error")
	}

	msg := "not authorized"
	cl.Broker(1).Handle(protocol.DescribeUserScramCredentials, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.DescribeUserScramCredentialsResponse{ThrottleTimeMs: 12, ErrorCode: int16(ClusterAuthorizationFailed), ErrorMessage: &msg}, fakebroker.Action{}
	})
	described, err := c.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(described.Error, ClusterAuthorizationFailed) || described.Throttle != 12*time.Millisecond || len(described.Results) != 0 {
		t.Errorf("describe: %+v", described)
	}

	if _, err := c.DescribeUserScramCredentials(ctx, nil); err == nil {
		t.Error("DescribeUserScramCredentials(nil): no error")
	}
	if _, err := c.AlterUserScramCredentials(ctx, nil); err == nil {
		t.Error("AlterUserScramCredentials(nil): no error")
	}
	cl.Broker(1).Handle(protocol.AlterUserScramCredentials, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.AlterUserScramCredentials(short, &AlterUserScramCredentialsRequest{}); err == nil || !strings.Contains(err.Error(), "AlterUserScramCredentials") {
		t.Errorf("closed connection: %v", err)
	}
}
