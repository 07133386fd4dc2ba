//go:build race

package protocol

// raceEnabled: the tests run under the race detector, whose sync.Pool drops
// items at random, so allocation counts mean nothing.
const raceEnabled = true
