//go:build !race

package compress_test

// raceEnabled: the tests run under the race detector (see race_on_test.go).
const raceEnabled = false
