package fakebroker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: Cluster.Close and Broker.Stop join the listeners and the connections they serve, and what the tests start through the client is closed too.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
