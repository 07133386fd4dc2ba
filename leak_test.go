package kafka

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: Close of
// a Reader, Writer, ConsumerGroup, Client or Conn joins everything it
// started (the engine a partition Reader shares stops with its last
// Reader, the metadata cache with its last user).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
