package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a command's watchers and planners end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
