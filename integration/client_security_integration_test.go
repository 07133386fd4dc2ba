package integration

// Integration tests of the Client's security administration against the real cluster: the ACL calls
// answer SecurityDisabled (the test cluster runs without an authorizer), client quotas are set, read back
// and removed, and a SCRAM user created with AlterUserScramCredentials logs in through a Dialer on the
// SASL listener until its credential is deleted.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"reflect"
	"sort"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// csecWait bounds how long a change takes to reach every broker (KRaft brokers apply the metadata log
// asynchronously); it takes milliseconds on a healthy cluster.
const csecWait = 20 * time.Second

func csecClient(t *testing.T, c *ktesting.Cluster) *kafka.Client {
	t.Helper()
	tr := &kafka.Transport{ClientID: "kafka-go-csec-itest"}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: itTimeout, Transport: tr}
}

// csecName is a user or client name no other test or run uses.
func csecName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + "-" + hex.EncodeToString(b)
}

// csecPBKDF2 is PBKDF2 (RFC 8018) with HMAC over h: the SCRAM SaltedPassword of RFC 5802 when keyLen is
// h's size. The standard library has it only from Go 1.24, above go.mod's version.
func csecPBKDF2(h func() hash.Hash, password, salt []byte, iterations, keyLen int) []byte {
	prf := hmac.New(h, password)
	var out []byte
	for block := uint32(1); len(out) < keyLen; block++ {
		prf.Reset()
		prf.Write(salt)
		prf.Write(binary.BigEndian.AppendUint32(nil, block))
		u := prf.Sum(nil)
		t := append([]byte(nil), u...)
		for i := 1; i < iterations; i++ {
			prf.Reset()
			prf.Write(u)
			u = prf.Sum(u[:0])
			for j := range t {
				t[j] ^= u[j]
			}
		}
		out = append(out, t...)
	}
	return out[:keyLen]
}

// The PBKDF2 the SCRAM test relies on, against the published vectors (RFC 6070 for HMAC-SHA1, RFC 7914
// section 11 for HMAC-SHA256). Needs no cluster.
func TestClientScramPBKDF2Vectors(t *testing.T) {
	for _, v := range []struct {
		h          func() hash.Hash
		p, s       string
		iterations int
		want       string
	}{
		{sha1.New, "password", "salt", 1, "0c60c80f961f0e71f3a9b524af6012062fe037a6"},
		{sha1.New, "password", "salt", 2, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"},
		{sha1.New, "password", "salt", 4096, "4b007901b765489abead49d926f721d065a429c1"},
		{sha1.New, "passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"},
		{sha1.New, "pass\x00word", "sa\x00lt", 4096, "56fa6aa75548099dcc37d7f03425e0c3"},
		{sha256.New, "passwd", "salt", 1, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"},
		{sha256.New, "Password", "NaCl", 80000, "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"},
	} {
		got := hex.EncodeToString(csecPBKDF2(v.h, []byte(v.p), []byte(v.s), v.iterations, len(v.want)/2))
		if got != v.want {
			t.Errorf("PBKDF2(%q, %q, %d) = %s, want %s", v.p, v.s, v.iterations, got, v.want)
		}
	}
}

// Without an authorizer every ACL call is answered, with SecurityDisabled in the response: the methods
// themselves succeed.
func TestClientACLIntegrationSecurityDisabled(t *testing.T) {
	c := requireRackCluster(t)
	client := csecClient(t, c)
	ctx := testContext(t, 30*time.Second)
	topic := csecName(t, "csec-acl")

	created, err := client.CreateACLs(ctx, &kafka.CreateACLsRequest{ACLs: []kafka.ACLEntry{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ResourcePatternType: kafka.PatternTypeLiteral,
		Principal: "User:csec", Host: "*", Operation: kafka.ACLOperationTypeRead, PermissionType: kafka.ACLPermissionTypeAllow,
	}}})
	if err != nil {
		t.Fatalf("CreateACLs: %v", err)
	}
	if len(created.Errors) != 1 || !errors.Is(created.Errors[0], kafka.SecurityDisabled) {
		t.Errorf("CreateACLs errors: %v, want [SecurityDisabled]", created.Errors)
	}

	described, err := client.DescribeACLs(ctx, &kafka.DescribeACLsRequest{Filter: kafka.ACLFilter{
		ResourceTypeFilter: kafka.ResourceTypeAny, ResourcePatternTypeFilter: kafka.PatternTypeAny,
		Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny,
	}})
	if err != nil {
		t.Fatalf("DescribeACLs: %v", err)
	}
	if !errors.Is(described.Error, kafka.SecurityDisabled) || len(described.Resources) != 0 {
		t.Errorf("DescribeACLs: error %v, resources %+v; want SecurityDisabled and none", described.Error, described.Resources)
	}

	deleted, err := client.DeleteACLs(ctx, &kafka.DeleteACLsRequest{Filters: []kafka.DeleteACLsFilter{{
		ResourceTypeFilter: kafka.ResourceTypeTopic, ResourceNameFilter: topic, ResourcePatternTypeFilter: kafka.PatternTypeLiteral,
		Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny,
	}}})
	if err != nil {
		t.Fatalf("DeleteACLs: %v", err)
	}
	if len(deleted.Results) != 1 || !errors.Is(deleted.Results[0].Error, kafka.SecurityDisabled) || len(deleted.Results[0].MatchingACLs) != 0 {
		t.Errorf("DeleteACLs results: %+v, want one SecurityDisabled", deleted.Results)
	}
}

// csecQuotas reads the quotas of user, sorted by key.
func csecQuotas(t *testing.T, client *kafka.Client, user string) ([]kafka.DescribeClientQuotasResponseQuotas, error) {
	t.Helper()
	res, err := client.DescribeClientQuotas(testContext(t, itTimeout), &kafka.DescribeClientQuotasRequest{
		Components: []kafka.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: user}},
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error
	}
	for _, e := range res.Entries {
		sort.Slice(e.Values, func(i, j int) bool { return e.Values[i].Key < e.Values[j].Key })
	}
	return res.Entries, nil
}

func TestClientQuotasIntegration(t *testing.T) {
	c := requireRackCluster(t)
	client := csecClient(t, c)
	ctx := testContext(t, 45*time.Second)
	user := csecName(t, "csec-quota")
	entity := []kafka.AlterClientQuotaEntity{{EntityType: "user", EntityName: user}}

	// Validate-only: checked, not applied; an unknown key is refused for its entity only.
	checked, err := client.AlterClientQuotas(ctx, &kafka.AlterClientQuotasRequest{ValidateOnly: true, Entries: []kafka.AlterClientQuotaEntry{
		{Entities: entity, Ops: []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 1}}},
		{Entities: []kafka.AlterClientQuotaEntity{{EntityType: "client-id", EntityName: user}}, Ops: []kafka.AlterClientQuotaOps{{Key: "csec_no_such_quota", Value: 1}}},
	}})
	if err != nil {
		t.Fatalf("AlterClientQuotas (validate only): %v", err)
	}
	// Kafka answers per entity, in no particular order.
	if len(checked.Entries) != 2 {
		t.Fatalf("validate-only results: %+v, want two", checked.Entries)
	}
	for _, e := range checked.Entries {
		switch {
		case len(e.Entities) != 1:
			t.Errorf("validate-only result for %+v", e.Entities)
		case e.Entities[0].EntityType == "user" && e.Error != nil:
			t.Errorf("validating producer_byte_rate: %v", e.Error)
		case e.Entities[0].EntityType == "client-id" && !errors.Is(e.Error, kafka.InvalidRequest):
			t.Errorf("validating an unknown quota key: %v, want InvalidRequest", e.Error)
		}
	}

	altered, err := client.AlterClientQuotas(ctx, &kafka.AlterClientQuotasRequest{Entries: []kafka.AlterClientQuotaEntry{{
		Entities: entity,
		Ops:      []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 1048576}, {Key: "consumer_byte_rate", Value: 2097152}},
	}}})
	if err != nil {
		t.Fatalf("AlterClientQuotas: %v", err)
	}
	if want := []kafka.AlterClientQuotaResponseQuotas{{Entities: entity}}; !reflect.DeepEqual(altered.Entries, want) {
		t.Fatalf("AlterClientQuotas entries %+v, want %+v", altered.Entries, want)
	}
	t.Cleanup(func() {
		client.AlterClientQuotas(testContext(t, itTimeout), &kafka.AlterClientQuotasRequest{Entries: []kafka.AlterClientQuotaEntry{{
			Entities: entity, Ops: []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}, {Key: "consumer_byte_rate", Remove: true}},
		}}})
	})

	want := []kafka.DescribeClientQuotasResponseQuotas{{
		Entities: []kafka.DescribeClientQuotasEntity{{EntityType: "user", EntityName: user}},
		Values:   []kafka.DescribeClientQuotasValue{{Key: "consumer_byte_rate", Value: 2097152}, {Key: "producer_byte_rate", Value: 1048576}},
	}}
	var last []kafka.DescribeClientQuotasResponseQuotas
	var lastErr error
	eventually(t, csecWait, "the quotas read back", func() bool {
		last, lastErr = csecQuotas(t, client, user)
		return lastErr == nil && reflect.DeepEqual(last, want)
	})

	// Remove one quota, then the other: the entity disappears.
	if _, err := client.AlterClientQuotas(ctx, &kafka.AlterClientQuotasRequest{Entries: []kafka.AlterClientQuotaEntry{{
		Entities: entity, Ops: []kafka.AlterClientQuotaOps{{Key: "consumer_byte_rate", Remove: true}},
	}}}); err != nil {
		t.Fatal(err)
	}
	want[0].Values = want[0].Values[1:]
	eventually(t, csecWait, "consumer_byte_rate removed", func() bool {
		last, lastErr = csecQuotas(t, client, user)
		return lastErr == nil && reflect.DeepEqual(last, want)
	})
	removed, err := client.AlterClientQuotas(ctx, &kafka.AlterClientQuotasRequest{Entries: []kafka.AlterClientQuotaEntry{{
		Entities: entity, Ops: []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}},
	}}})
	if err != nil || len(removed.Entries) != 1 || removed.Entries[0].Error != nil {
		t.Fatalf("removing producer_byte_rate: %v %+v", err, removed)
	}
	eventually(t, csecWait, "the user's quotas gone", func() bool {
		last, lastErr = csecQuotas(t, client, user)
		return lastErr == nil && len(last) == 0
	})
}

// csecLogin dials addr as user over SCRAM-SHA-256 and reads the brokers.
func csecLogin(t *testing.T, addr, user, password string) error {
	t.Helper()
	d := newDialer()
	d.SASLMechanism = mechanism(t, "SCRAM-SHA-256", user, password)
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(itTimeout))
	_, err = conn.Brokers()
	return err
}

// The SCRAM test runs on a cluster of its own: deleting a SCRAM credential trips a Kafka bug that would
// break the shared cluster's SCRAM users for the tests after it. Kafka's ScramDelta.apply (3.7) walks a
// mechanism's user changes in HashMap order and drops the mechanism's whole map when a deletion empties it;
// a broker restarted later replays every change in one delta, so when a deleted user comes first the users
// applied after it are lost on that broker. Seen here: after this test and `kafka-cluster restart 1`,
// broker 1 refused the cluster's SCRAM-SHA-256 user while brokers 2 and 3 accepted it, and Kafka's own
// DescribeUserScramCredentials at broker 1 no longer listed it.
func TestClientScramIntegration(t *testing.T) {
	requireRackCluster(t)
	c := ktesting.StartCluster(t, ktesting.ClusterOptions{PortBase: secondClusterPortBase(t)})
	if len(c.SASLBrokers) == 0 {
		t.Skip("no SASL listeners in the environment (KAFKA_SASL_BROKERS)")
	}
	client := csecClient(t, c)
	ctx := testContext(t, 50*time.Second)
	user, password := csecName(t, "csec-scram"), csecName(t, "pw")
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	const iterations = 4096

	// Kafka refuses fewer than 4096 iterations, for that user only.
	weak, err := client.AlterUserScramCredentials(ctx, &kafka.AlterUserScramCredentialsRequest{Upsertions: []kafka.UserScramCredentialsUpsertion{{
		Name: user, Mechanism: kafka.ScramMechanismSha256, Iterations: 1000, Salt: salt,
		SaltedPassword: csecPBKDF2(sha256.New, []byte(password), salt, 1000, sha256.Size),
	}}})
	if err != nil {
		t.Fatalf("AlterUserScramCredentials (1000 iterations): %v", err)
	}
	if len(weak.Results) != 1 || weak.Results[0].User != user || !errors.Is(weak.Results[0].Error, kafka.UnacceptableCredential) {
		t.Fatalf("1000 iterations: %+v, want UnacceptableCredential", weak.Results)
	}

	// A user without credentials is ResourceNotFound, in its result.
	unknown, err := client.DescribeUserScramCredentials(ctx, &kafka.DescribeUserScramCredentialsRequest{Users: []kafka.UserScramCredentialsUser{{Name: user}}})
	if err != nil || unknown.Error != nil {
		t.Fatalf("DescribeUserScramCredentials: %v %v", err, unknown.Error)
	}
	if len(unknown.Results) != 1 || !errors.Is(unknown.Results[0].Error, kafka.ResourceNotFound) {
		t.Fatalf("unknown user: %+v, want ResourceNotFound", unknown.Results)
	}

	created, err := client.AlterUserScramCredentials(ctx, &kafka.AlterUserScramCredentialsRequest{Upsertions: []kafka.UserScramCredentialsUpsertion{{
		Name: user, Mechanism: kafka.ScramMechanismSha256, Iterations: iterations, Salt: salt,
		SaltedPassword: csecPBKDF2(sha256.New, []byte(password), salt, iterations, sha256.Size),
	}}})
	if err != nil {
		t.Fatalf("AlterUserScramCredentials: %v", err)
	}
	if want := []kafka.AlterUserScramCredentialsResponseUser{{User: user}}; !reflect.DeepEqual(created.Results, want) {
		t.Fatalf("upsert results %+v, want %+v", created.Results, want)
	}
	deleteCred := func() (*kafka.AlterUserScramCredentialsResponse, error) {
		return client.AlterUserScramCredentials(testContext(t, itTimeout), &kafka.AlterUserScramCredentialsRequest{
			Deletions: []kafka.UserScramCredentialsDeletion{{Name: user, Mechanism: kafka.ScramMechanismSha256}},
		})
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			deleteCred()
		}
	})

	wantInfo := []kafka.DescribeUserScramCredentialsCredentialInfo{{Mechanism: kafka.ScramMechanismSha256, Iterations: iterations}}
	var described *kafka.DescribeUserScramCredentialsResponse
	eventually(t, csecWait, "the credential described", func() bool {
		described, err = client.DescribeUserScramCredentials(ctx, &kafka.DescribeUserScramCredentialsRequest{Users: []kafka.UserScramCredentialsUser{{Name: user}}})
		return err == nil && described.Error == nil && len(described.Results) == 1 && described.Results[0].Error == nil &&
			reflect.DeepEqual(described.Results[0].CredentialInfos, wantInfo)
	})
	if described.Results[0].User != user {
		t.Errorf("described user %q, want %q", described.Results[0].User, user)
	}

	// The new user logs in on every broker's SASL listener; a wrong password does not.
	for _, addr := range c.SASLBrokers {
		var loginErr error
		eventually(t, csecWait, "logging in at "+addr, func() bool {
			loginErr = csecLogin(t, addr, user, password)
			return loginErr == nil
		})
	}
	if err := csecLogin(t, c.SASLBrokers[0], user, password+"x"); !errors.Is(err, kafka.SASLAuthenticationFailed) {
		t.Errorf("wrong password: %v, want SASLAuthenticationFailed", err)
	}

	// Delete the credential: described no more, and the login fails everywhere.
	res, err := deleteCred()
	if err != nil || len(res.Results) != 1 || res.Results[0] != (kafka.AlterUserScramCredentialsResponseUser{User: user}) {
		t.Fatalf("deleting the credential: %v %+v", err, res)
	}
	deleted = true
	eventually(t, csecWait, "the credential gone", func() bool {
		described, err = client.DescribeUserScramCredentials(ctx, &kafka.DescribeUserScramCredentialsRequest{Users: []kafka.UserScramCredentialsUser{{Name: user}}})
		return err == nil && len(described.Results) == 1 && errors.Is(described.Results[0].Error, kafka.ResourceNotFound)
	})
	for _, addr := range c.SASLBrokers {
		var loginErr error
		eventually(t, csecWait, "the login refused at "+addr, func() bool {
			loginErr = csecLogin(t, addr, user, password)
			return errors.Is(loginErr, kafka.SASLAuthenticationFailed)
		})
	}

	// Deleting it again: ResourceNotFound for the user.
	again, err := deleteCred()
	if err != nil || len(again.Results) != 1 || !errors.Is(again.Results[0].Error, kafka.ResourceNotFound) {
		t.Errorf("deleting twice: %v %+v, want ResourceNotFound", err, again)
	}
}
