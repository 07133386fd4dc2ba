package testing

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	stdtesting "testing"
)

func TestUnquoteShell(t *stdtesting.T) {
	for in, want := range map[string]string{
		"127.0.0.1:1,127.0.0.1:2": "127.0.0.1:1,127.0.0.1:2",
		"'a b'":                   "a b",
		`'a'\''b'`:                "a'b",
		`'a\b'`:                   `a\b`,
		"''":                      "",
	} {
		if got := unquoteShell(in); got != want {
			t.Errorf("unquoteShell(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestReadEnvFile(t *stdtesting.T) {
	path := filepath.Join(t.TempDir(), "env")
	data := "# comment\nexport KAFKA_BROKERS=127.0.0.1:58091,127.0.0.1:58092,127.0.0.1:58093\n" +
		"export KAFKA_BROKER_IDS=1,2,3\nexport KAFKA_RACKS=1=a,2=b,3=c\nexport KAFKA_SELECTOR=none\n" +
		"export KAFKA_TLS_CA='/tmp/a dir/ca.pem'\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	vars, err := readEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCluster(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Brokers) != 3 || c.Addr(2) != "127.0.0.1:58092" || c.Rack(3) != "c" || c.HasSelector() || c.TLSCA != "/tmp/a dir/ca.pem" {
		t.Errorf("cluster: %+v", c)
	}
}

func TestClusterToolEnv(t *stdtesting.T) {
	environ := []string{"PATH=/bin", "KAFKA_BROKERS=x:1", "KAFKA_STATE_DIR=/other", "KAFKA_PORT_BASE=1",
		"KAFKA_SELECTOR=rack", "KAFKA_VERSION=3.7.2", "KAFKA_JAVA_HOME=/jdk", "KAFKA_CLUSTER_TOOL=/t"}
	got := clusterToolEnv(environ, ClusterOptions{Selector: "none", PortBase: 58090}, "/s")
	sort.Strings(got)
	want := []string{"KAFKA_JAVA_HOME=/jdk", "KAFKA_PORT_BASE=58090", "KAFKA_SELECTOR=none", "KAFKA_STATE_DIR=/s", "KAFKA_VERSION=3.7.2", "PATH=/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("env\n got  %v\n want %v", got, want)
	}
	got = clusterToolEnv(environ, ClusterOptions{PortBase: 1, Version: "2.8"}, "/s")
	sort.Strings(got)
	want = []string{"KAFKA_JAVA_HOME=/jdk", "KAFKA_PORT_BASE=1", "KAFKA_SELECTOR=rack", "KAFKA_STATE_DIR=/s", "KAFKA_VERSION=2.8", "PATH=/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("env with a version\n got  %v\n want %v", got, want)
	}
}
