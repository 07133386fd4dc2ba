// Package prefetch asks the CPU to start loading a cache line the program
// will read soon, so that the wait for memory overlaps other work.
package prefetch

// Bytes asks for the first and the last cache line of b.
func Bytes(b []byte) {
	if len(b) == 0 {
		return
	}
	line(&b[0])
	line(&b[len(b)-1])
}
