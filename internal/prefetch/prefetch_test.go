package prefetch

import "testing"

// Bytes is a hint: it must accept any slice, empty ones included, and
// change nothing.
func TestBytes(t *testing.T) {
	b := []byte("value")
	for _, s := range [][]byte{nil, {}, b[:1], b, b[4:], make([]byte, 1<<20)} {
		Bytes(s)
	}
	if string(b) != "value" {
		t.Fatalf("Bytes changed its argument: %q", b)
	}
}
