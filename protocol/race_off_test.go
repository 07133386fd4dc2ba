//go:build !race

package protocol

// raceEnabled: the tests run under the race detector (see race_on_test.go).
const raceEnabled = false
