package testing

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ErrNoCluster is returned by ClusterFromEnv when KAFKA_BROKERS is unset.
var ErrNoCluster = errors.New("ktesting: no Kafka cluster (KAFKA_BROKERS is unset)")

// Credentials are a SASL user and password.
type Credentials struct {
	User     string
	Password string
}

// Cluster describes the test cluster, as the environment tells it (see ClusterFromEnv).
type Cluster struct {
	// Brokers are the PLAINTEXT addresses (host:port), in the order of BrokerIDs.
	Brokers []string
	// BrokerIDs are the broker ids, one per entry of Brokers; empty when KAFKA_BROKER_IDS is unset.
	BrokerIDs []int
	// Racks maps broker id to broker.rack.
	Racks map[int]string
	// Version is the brokers' Kafka version ("3.7.2"), or "" when unknown.
	Version string
	// Mode is "kraft" or "zk" ("" when unknown).
	Mode string
	// Selector is the brokers' replica.selector.class, or "none" when they have none ("" when unknown).
	Selector string

	// SASLBrokers are SASL_PLAINTEXT listeners; SASLTLSBrokers SASL_SSL ones; TLSBrokers SSL ones.
	// All are in the order of BrokerIDs.
	SASLBrokers    []string
	SASLTLSBrokers []string
	TLSBrokers     []string
	// TLSCA is the path of a PEM file with the CA that signed the brokers' certificates.
	TLSCA string

	// Users known to the SASL listeners, one per mechanism.
	Plain    Credentials // PLAIN
	SCRAM256 Credentials // SCRAM-SHA-256
	SCRAM512 Credentials // SCRAM-SHA-512

	// FaultBrokers are the brokers' client-only addresses behind the fault proxy (KAFKA_FAULT_BROKERS, a
	// cluster started with KAFKA_NETFAULT=1), in the order of BrokerIDs; empty without the proxy. A client
	// that bootstraps from them is given these addresses for every broker, so NetFault's faults reach it.
	FaultBrokers []string
	// FaultControl is the fault proxy's control API (KAFKA_NETFAULT_CONTROL), "" without the proxy.
	FaultControl string

	// Tool is the absolute path of the cluster tool (testing/cluster/kafka-cluster), "" when unknown.
	Tool string

	own *ownCluster // set by StartCluster
}

// ClusterFromEnv reads the cluster from the environment that `kafka-cluster env` writes (.kafka/env).
// It returns ErrNoCluster when KAFKA_BROKERS is unset.
func ClusterFromEnv() (*Cluster, error) { return parseCluster(os.Getenv) }

func parseCluster(getenv func(string) string) (*Cluster, error) {
	c := &Cluster{
		Brokers:        splitList(getenv("KAFKA_BROKERS")),
		Version:        strings.TrimSpace(getenv("KAFKA_VERSION")),
		Mode:           strings.TrimSpace(getenv("KAFKA_MODE")),
		Selector:       strings.TrimSpace(getenv("KAFKA_SELECTOR")),
		SASLBrokers:    splitList(getenv("KAFKA_SASL_BROKERS")),
		SASLTLSBrokers: splitList(getenv("KAFKA_SASL_TLS_BROKERS")),
		TLSBrokers:     splitList(getenv("KAFKA_TLS_BROKERS")),
		TLSCA:          strings.TrimSpace(getenv("KAFKA_TLS_CA")),
		Plain:          Credentials{getenv("KAFKA_PLAIN_USER"), getenv("KAFKA_PLAIN_PASSWORD")},
		SCRAM256:       Credentials{getenv("KAFKA_SCRAM256_USER"), getenv("KAFKA_SCRAM256_PASSWORD")},
		SCRAM512:       Credentials{getenv("KAFKA_SCRAM512_USER"), getenv("KAFKA_SCRAM512_PASSWORD")},
		Tool:           strings.TrimSpace(getenv("KAFKA_CLUSTER_TOOL")),
		FaultBrokers:   splitList(getenv("KAFKA_FAULT_BROKERS")),
		FaultControl:   strings.TrimSpace(getenv("KAFKA_NETFAULT_CONTROL")),
	}
	if len(c.Brokers) == 0 {
		return nil, ErrNoCluster
	}
	var err error
	if c.BrokerIDs, err = parseIDs(getenv("KAFKA_BROKER_IDS")); err != nil {
		return nil, err
	}
	if len(c.BrokerIDs) > 0 && len(c.BrokerIDs) != len(c.Brokers) {
		return nil, fmt.Errorf("ktesting: KAFKA_BROKER_IDS has %d ids for %d KAFKA_BROKERS", len(c.BrokerIDs), len(c.Brokers))
	}
	for name, l := range map[string][]string{"KAFKA_FAULT_BROKERS": c.FaultBrokers, "KAFKA_SASL_BROKERS": c.SASLBrokers, "KAFKA_SASL_TLS_BROKERS": c.SASLTLSBrokers, "KAFKA_TLS_BROKERS": c.TLSBrokers} {
		if len(l) > 0 && len(l) != len(c.Brokers) {
			return nil, fmt.Errorf("ktesting: %s has %d addresses for %d KAFKA_BROKERS", name, len(l), len(c.Brokers))
		}
	}
	if c.Racks, err = parseRacks(getenv("KAFKA_RACKS")); err != nil {
		return nil, err
	}
	if c.Version != "" {
		if _, err := parseVersion(c.Version); err != nil {
			return nil, fmt.Errorf("ktesting: KAFKA_VERSION: %v", err)
		}
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseIDs reads "1,2,3".
func parseIDs(s string) ([]int, error) {
	var ids []int
	seen := map[int]bool{}
	for _, f := range splitList(s) {
		id, err := strconv.Atoi(f)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("ktesting: KAFKA_BROKER_IDS=%q: %q is not a broker id", s, f)
		}
		if seen[id] {
			return nil, fmt.Errorf("ktesting: KAFKA_BROKER_IDS=%q: id %d twice", s, id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// parseRacks reads "1=a,2=b,3=c".
func parseRacks(s string) (map[int]string, error) {
	racks := map[int]string{}
	for _, f := range splitList(s) {
		k, v, ok := strings.Cut(f, "=")
		id, err := strconv.Atoi(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if !ok || err != nil || id < 0 || v == "" {
			return nil, fmt.Errorf("ktesting: KAFKA_RACKS=%q: %q is not id=rack", s, f)
		}
		if _, dup := racks[id]; dup {
			return nil, fmt.Errorf("ktesting: KAFKA_RACKS=%q: id %d twice", s, id)
		}
		racks[id] = v
	}
	return racks, nil
}

// index is the position of broker id in BrokerIDs, or -1.
func (c *Cluster) index(id int) int {
	for i, b := range c.BrokerIDs {
		if b == id {
			return i
		}
	}
	return -1
}

// Addr is the PLAINTEXT address of broker id, or "" when the cluster has no such broker.
func (c *Cluster) Addr(id int) string {
	if i := c.index(id); i >= 0 {
		return c.Brokers[i]
	}
	return ""
}

// Rack is broker id's broker.rack, or "" when unknown.
func (c *Cluster) Rack(id int) string { return c.Racks[id] }

// BrokersInRack are the ids of the brokers in rack, in increasing order.
func (c *Cluster) BrokersInRack(rack string) []int {
	var ids []int
	for id, r := range c.Racks {
		if r == rack {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

// HasSelector reports whether the brokers were started with a replica.selector.class.
func (c *Cluster) HasSelector() bool { return c.Selector != "" && c.Selector != "none" }

// Brokers are the test cluster's PLAINTEXT addresses from KAFKA_BROKERS (nil when unset).
func Brokers() []string { return splitList(os.Getenv("KAFKA_BROKERS")) }

// BrokerIDs are the broker ids from KAFKA_BROKER_IDS, in the order of Brokers (nil when unset or invalid).
func BrokerIDs() []int {
	ids, err := parseIDs(os.Getenv("KAFKA_BROKER_IDS"))
	if err != nil {
		return nil
	}
	return ids
}

// Racks maps broker id to rack, from KAFKA_RACKS ("1=a,2=b,3=c"); empty when unset or invalid.
func Racks() map[int]string {
	racks, err := parseRacks(os.Getenv("KAFKA_RACKS"))
	if err != nil {
		return map[int]string{}
	}
	return racks
}
