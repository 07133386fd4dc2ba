package topics_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: the
// Client the listing uses joins its connections on Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
