package testing

import (
	"fmt"
	stdtesting "testing"
)

// RequireRackCluster is RequireCluster for tests that need the cluster of kafka-cluster: 3 brokers in 3
// racks. Another cluster skips the test, or fails it when Required.
func RequireRackCluster(t stdtesting.TB) *Cluster {
	t.Helper()
	c := RequireCluster(t)
	racks := map[string]bool{}
	for _, id := range c.BrokerIDs {
		racks[c.Rack(id)] = true
	}
	if len(c.BrokerIDs) != 3 || len(racks) != 3 || racks[""] {
		msg := fmt.Sprintf("these tests need 3 brokers in 3 racks (KAFKA_BROKER_IDS=%v, KAFKA_RACKS=%v)", c.BrokerIDs, c.Racks)
		if Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return c
}
