//go:build race

package compress_test

// raceEnabled: the tests run under the race detector, whose sync.Pool drops
// items at random: a pooled decoder (and the window it keeps) is made again,
// so allocation bounds that count on the pool mean nothing there.
const raceEnabled = true
