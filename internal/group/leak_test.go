package group

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: Close
// joins the member's run loop and its generation's functions.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
