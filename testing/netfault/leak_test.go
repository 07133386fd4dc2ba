package netfault

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: Proxy.Close joins its listeners and
// connections, and the Client keeps no idle connection.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
