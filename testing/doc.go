// Package testing holds kafka-go's helpers for tests that run against a real Kafka cluster. Import it as
// ktesting:
//
//	import ktesting "github.com/rackfetch/kafka-go/testing"
//
// The cluster comes from testing/cluster/kafka-cluster (`make kafka-up`), which writes its description to
// .kafka/env as environment variables: KAFKA_BROKERS, KAFKA_BROKER_IDS, KAFKA_RACKS, KAFKA_VERSION, the
// SASL and TLS listeners and users, and KAFKA_CLUSTER_TOOL, the tool the chaos helpers call. `make test`
// starts a cluster and sets these when KAFKA_BROKERS is unset.
//
// A test that needs the cluster starts with RequireCluster, which skips the test when there is no cluster,
// unless CI or KAFKA_REQUIRE is set: then a missing cluster fails the test, so that integration tests can
// never pass by being skipped. Tests gate on the broker version with KafkaIsAtLeast, name topics with
// UniqueTopic, and inject faults with KillBroker, PauseBroker, ResumeBroker and RestartBroker.
//
// go test runs the packages of ./... at the same time against the one cluster. A test that calls
// RequireCluster holds the cluster shared until it ends; the chaos helpers (and LockCluster) take it for
// their test alone, so a broker taken away by a test of one package is never missing for a test of
// another, and is back before the next test gets the cluster.
//
// A cluster started with KAFKA_NETFAULT=1 also has a fault proxy in front of a client-only listener per
// broker (KAFKA_FAULT_BROKERS, package netfault): NetFault returns its control, to black-hole, slow or
// throttle the network path between the test's clients and one broker while replication stays healthy.
//
// The package imports only the standard library (and its own netfault package, which does too).
package testing
