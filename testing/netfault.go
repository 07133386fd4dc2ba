package testing

import (
	"context"
	"os"
	stdtesting "testing"
	"time"

	"github.com/rackfetch/kafka-go/testing/netfault"
)

// NetFault returns the control of the cluster's fault proxy (testing/netfault), which stands between the
// clients that bootstrap from Cluster.FaultBrokers and each broker: its faults break one broker's client
// path while the brokers keep replicating. A cluster without the proxy (started without KAFKA_NETFAULT=1)
// skips the test, or fails it when KAFKA_REQUIRE_NETFAULT is set (`make test-netfault`). The test takes the
// cluster for itself (LockCluster), and a cleanup clears every fault.
func NetFault(t stdtesting.TB) (*Cluster, *netfault.Client) {
	t.Helper()
	c := RequireCluster(t)
	if len(c.FaultBrokers) == 0 || c.FaultControl == "" {
		msg := "ktesting: the cluster has no fault proxy (KAFKA_FAULT_BROKERS unset): start it with `KAFKA_NETFAULT=1 kafka-cluster up` or run `make test-netfault`"
		if isSet(os.Getenv("KAFKA_REQUIRE_NETFAULT")) {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	LockCluster(t)
	nf := &netfault.Client{Addr: c.FaultControl}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nf.Clear(ctx, 0); err != nil {
		t.Fatalf("ktesting: the fault proxy at %s does not answer: %v", c.FaultControl, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := nf.Clear(ctx, 0); err != nil {
			t.Errorf("ktesting: clearing the network faults: %v", err)
		}
	})
	return c, nf
}

// FaultAddr is broker id's address behind the fault proxy, or "" without one.
func (c *Cluster) FaultAddr(id int) string {
	if i := c.index(id); i >= 0 && i < len(c.FaultBrokers) {
		return c.FaultBrokers[i]
	}
	return ""
}
