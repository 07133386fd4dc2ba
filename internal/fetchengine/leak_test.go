package fetchengine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: Close of an engine joins its broker loops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
