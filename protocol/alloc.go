package protocol

import (
	"strings"
	"unsafe"
)

// unzeroedMin is the size from which makeUnzeroed skips the clearing;
// below it the allocator's clearing is cheap.
const unzeroedMin = 64 << 10

// makeUnzeroed returns n bytes that the caller overwrites whole before it
// reads any (a frame read from the socket). make clears memory the
// runtime reuses, and for fetch responses of tens of MB that clearing was
// 3-6 % of a consumer's CPU (bench/RESULTS.md). strings.Builder grows
// without clearing; its buffer is taken over here, and the string made to
// reach it is never used, so nothing sees its bytes change.
func makeUnzeroed(n int) []byte {
	if n < unzeroedMin {
		return make([]byte, n)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0)
	return unsafe.Slice(unsafe.StringData(b.String()), n)
}
