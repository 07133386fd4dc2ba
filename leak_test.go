package kafka

import (
	"runtime"
	"strings"
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

// goroutinesIn returns the stacks of goroutines with fn in their stack.
func goroutinesIn(fn string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			out = append(out, g)
		}
	}
	return out
}
