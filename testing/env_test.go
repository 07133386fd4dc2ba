package testing

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	stdtesting "testing"
)

// fullEnv is what `kafka-cluster env` writes for the default cluster.
var fullEnv = map[string]string{
	"KAFKA_BROKERS":           "127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093",
	"KAFKA_BROKER_IDS":        "1,2,3",
	"KAFKA_RACKS":             "1=a,2=b,3=c",
	"KAFKA_VERSION":           "3.7.2",
	"KAFKA_MODE":              "kraft",
	"KAFKA_SELECTOR":          "org.apache.kafka.common.replica.RackAwareReplicaSelector",
	"KAFKA_SASL_BROKERS":      "127.0.0.1:29101,127.0.0.1:29102,127.0.0.1:29103",
	"KAFKA_TLS_BROKERS":       "127.0.0.1:29111,127.0.0.1:29112,127.0.0.1:29113",
	"KAFKA_SASL_TLS_BROKERS":  "127.0.0.1:29121,127.0.0.1:29122,127.0.0.1:29123",
	"KAFKA_TLS_CA":            "/repo/.kafka/certs/ca.pem",
	"KAFKA_PLAIN_USER":        "plain-user",
	"KAFKA_PLAIN_PASSWORD":    "plain-secret",
	"KAFKA_SCRAM256_USER":     "scram256-user",
	"KAFKA_SCRAM256_PASSWORD": "scram256-secret",
	"KAFKA_SCRAM512_USER":     "scram512-user",
	"KAFKA_SCRAM512_PASSWORD": "scram512-secret",
	"KAFKA_CLUSTER_TOOL":      "/repo/testing/cluster/kafka-cluster",
}

func envWith(base map[string]string, kv ...string) func(string) string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseClusterFull(t *stdtesting.T) {
	c, err := parseCluster(envWith(fullEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := &Cluster{
		Brokers:        []string{"127.0.0.1:29091", "127.0.0.1:29092", "127.0.0.1:29093"},
		BrokerIDs:      []int{1, 2, 3},
		Racks:          map[int]string{1: "a", 2: "b", 3: "c"},
		Version:        "3.7.2",
		Mode:           "kraft",
		Selector:       "org.apache.kafka.common.replica.RackAwareReplicaSelector",
		SASLBrokers:    []string{"127.0.0.1:29101", "127.0.0.1:29102", "127.0.0.1:29103"},
		SASLTLSBrokers: []string{"127.0.0.1:29121", "127.0.0.1:29122", "127.0.0.1:29123"},
		TLSBrokers:     []string{"127.0.0.1:29111", "127.0.0.1:29112", "127.0.0.1:29113"},
		TLSCA:          "/repo/.kafka/certs/ca.pem",
		Plain:          Credentials{"plain-user", "plain-secret"},
		SCRAM256:       Credentials{"scram256-user", "scram256-secret"},
		SCRAM512:       Credentials{"scram512-user", "scram512-secret"},
		Tool:           "/repo/testing/cluster/kafka-cluster",
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("parseCluster:\n got %+v\nwant %+v", c, want)
	}
	if got := c.Addr(2); got != "127.0.0.1:29092" {
		t.Errorf("Addr(2) = %q", got)
	}
	if got := c.Addr(7); got != "" {
		t.Errorf("Addr(7) = %q, want empty", got)
	}
	if got := c.Rack(3); got != "c" {
		t.Errorf("Rack(3) = %q", got)
	}
	if got := c.BrokersInRack("b"); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("BrokersInRack(b) = %v", got)
	}
	if !c.HasSelector() {
		t.Error("HasSelector() = false with a selector class")
	}
}

func TestParseClusterMinimal(t *stdtesting.T) {
	// A cluster of one's own: only KAFKA_BROKERS, with spaces and a trailing comma.
	c, err := parseCluster(envWith(nil, "KAFKA_BROKERS", " localhost:9092 , localhost:9093,"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Brokers, []string{"localhost:9092", "localhost:9093"}) {
		t.Errorf("Brokers = %q", c.Brokers)
	}
	if len(c.BrokerIDs) != 0 || len(c.Racks) != 0 || c.Version != "" || c.Tool != "" || c.HasSelector() {
		t.Errorf("unexpected fields in %+v", c)
	}
}

func TestParseClusterNoBrokers(t *stdtesting.T) {
	for _, v := range []string{"", " ", ","} {
		if _, err := parseCluster(envWith(fullEnv, "KAFKA_BROKERS", v)); !errors.Is(err, ErrNoCluster) {
			t.Errorf("KAFKA_BROKERS=%q: err = %v, want ErrNoCluster", v, err)
		}
	}
}

func TestParseClusterSelectorNone(t *stdtesting.T) {
	c, err := parseCluster(envWith(fullEnv, "KAFKA_SELECTOR", "none"))
	if err != nil {
		t.Fatal(err)
	}
	if c.HasSelector() {
		t.Error("HasSelector() = true with KAFKA_SELECTOR=none")
	}
}

func TestParseClusterErrors(t *stdtesting.T) {
	for _, kv := range [][2]string{
		{"KAFKA_BROKER_IDS", "1,2"},
		{"KAFKA_BROKER_IDS", "1,x,3"},
		{"KAFKA_BROKER_IDS", "1,1,3"},
		{"KAFKA_BROKER_IDS", "1,-2,3"},
		{"KAFKA_RACKS", "1=a,2,3=c"},
		{"KAFKA_RACKS", "1=a,2=,3=c"},
		{"KAFKA_RACKS", "x=a"},
		{"KAFKA_RACKS", "1=a,1=b"},
		{"KAFKA_SASL_BROKERS", "127.0.0.1:1"},
		{"KAFKA_TLS_BROKERS", "a:1,b:2"},
		{"KAFKA_VERSION", "latest"},
	} {
		if c, err := parseCluster(envWith(fullEnv, kv[0], kv[1])); err == nil {
			t.Errorf("%s=%q: no error, got %+v", kv[0], kv[1], c)
		}
	}
}

func TestEnvAccessors(t *stdtesting.T) {
	t.Setenv("KAFKA_BROKERS", fullEnv["KAFKA_BROKERS"])
	t.Setenv("KAFKA_BROKER_IDS", "3,1,2")
	t.Setenv("KAFKA_RACKS", "1=a, 2=b ,3=c")
	t.Setenv("KAFKA_VERSION", "2.8.2")
	if got := Brokers(); len(got) != 3 || got[0] != "127.0.0.1:29091" {
		t.Errorf("Brokers() = %q", got)
	}
	if got := BrokerIDs(); !reflect.DeepEqual(got, []int{3, 1, 2}) {
		t.Errorf("BrokerIDs() = %v", got)
	}
	if got := Racks(); !reflect.DeepEqual(got, map[int]string{1: "a", 2: "b", 3: "c"}) {
		t.Errorf("Racks() = %v", got)
	}
	if got := KafkaVersion(); got != "2.8.2" {
		t.Errorf("KafkaVersion() = %q", got)
	}
	t.Setenv("KAFKA_RACKS", "bad")
	if got := Racks(); len(got) != 0 {
		t.Errorf("Racks() with a bad KAFKA_RACKS = %v, want empty", got)
	}
	t.Setenv("KAFKA_BROKERS", "")
	if got := Brokers(); got != nil {
		t.Errorf("Brokers() unset = %q", got)
	}
}

// fakeTB records Skip and Fatal instead of ending a goroutine.
type fakeTB struct {
	stdtesting.TB
	name            string
	skipped, failed bool
	msg             string
	cleanups        []func()
}

type stopped struct{}

func (f *fakeTB) Helper()                         {}
func (f *fakeTB) Skip(args ...any)                { f.skipped, f.msg = true, fmt.Sprint(args...); panic(stopped{}) }
func (f *fakeTB) Fatal(args ...any)               { f.failed, f.msg = true, fmt.Sprint(args...); panic(stopped{}) }
func (f *fakeTB) Fatalf(format string, a ...any)  { f.Fatal(fmt.Sprintf(format, a...)) }
func (f *fakeTB) Skipf(format string, a ...any)   { f.Skip(fmt.Sprintf(format, a...)) }
func (f *fakeTB) Name() string                    { return f.name }
func (f *fakeTB) Cleanup(fn func())               { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(format string, args ...any) {}

func callRequire(short bool, getenv func(string) string) (f *fakeTB, c *Cluster) {
	f = &fakeTB{name: "TestFake"}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopped); !ok {
				panic(r)
			}
		}
	}()
	return f, requireCluster(f, short, getenv)
}

func TestRequireCluster(t *stdtesting.T) {
	for _, tc := range []struct {
		name         string
		short        bool
		env          func(string) string
		skip, fail   bool
		wantMsgMatch string
	}{
		{name: "cluster", env: envWith(fullEnv)},
		{name: "cluster in CI", env: envWith(fullEnv, "CI", "true")},
		{name: "no cluster", env: envWith(nil), skip: true, wantMsgMatch: "KAFKA_BROKERS is unset"},
		{name: "no cluster, CI=false", env: envWith(nil, "CI", "false"), skip: true},
		{name: "no cluster, CI", env: envWith(nil, "CI", "true"), fail: true, wantMsgMatch: "must run"},
		{name: "no cluster, KAFKA_REQUIRE", env: envWith(nil, "KAFKA_REQUIRE", "1"), fail: true},
		{name: "short", short: true, env: envWith(fullEnv, "CI", "true"), skip: true, wantMsgMatch: "-short"},
		{name: "bad env", env: envWith(fullEnv, "KAFKA_RACKS", "1"), fail: true, wantMsgMatch: "KAFKA_RACKS"},
	} {
		f, c := callRequire(tc.short, tc.env)
		if f.skipped != tc.skip || f.failed != tc.fail {
			t.Errorf("%s: skipped=%v failed=%v (%q), want skipped=%v failed=%v", tc.name, f.skipped, f.failed, f.msg, tc.skip, tc.fail)
			continue
		}
		if !tc.skip && !tc.fail && (c == nil || len(c.Brokers) != 3) {
			t.Errorf("%s: cluster = %+v", tc.name, c)
		}
		if tc.wantMsgMatch != "" && !strings.Contains(f.msg, tc.wantMsgMatch) {
			t.Errorf("%s: message %q does not mention %q", tc.name, f.msg, tc.wantMsgMatch)
		}
	}
}

func TestUniqueTopic(t *stdtesting.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9-]+$`)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		name := UniqueTopic(t)
		if !valid.MatchString(name) || len(name) > 249 || !strings.HasPrefix(name, "kt-TestUniqueTopic-") {
			t.Fatalf("UniqueTopic = %q", name)
		}
		if seen[name] {
			t.Fatalf("UniqueTopic repeated %q", name)
		}
		seen[name] = true
	}
	t.Run("sub/test.with_odd chars:"+strings.Repeat("x", 170), func(t *stdtesting.T) {
		name := UniqueTopic(t)
		if !valid.MatchString(name) || len(name) > 200 {
			t.Fatalf("UniqueTopic = %q (%d chars)", name, len(name))
		}
	})
}

// runCleanups runs what the fake test registered, last first, as the testing package does.
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
}

func TestParseClusterFaultProxy(t *stdtesting.T) {
	c, err := parseCluster(envWith(fullEnv, "KAFKA_FAULT_BROKERS", "127.0.0.1:29161,127.0.0.1:29162,127.0.0.1:29163",
		"KAFKA_NETFAULT_CONTROL", "127.0.0.1:29170"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.FaultAddr(2); got != "127.0.0.1:29162" {
		t.Errorf("FaultAddr(2) = %q", got)
	}
	if c.FaultControl != "127.0.0.1:29170" {
		t.Errorf("FaultControl = %q", c.FaultControl)
	}
	if _, err := parseCluster(envWith(fullEnv, "KAFKA_FAULT_BROKERS", "127.0.0.1:29161")); err == nil {
		t.Error("one fault address for three brokers: no error")
	}
	c, err = parseCluster(envWith(fullEnv))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.FaultAddr(2); got != "" {
		t.Errorf("FaultAddr(2) without the proxy = %q, want empty", got)
	}
}
