package protocol

import (
	"math"
	"time"
)

// Millis turns d into the int32 milliseconds of a request field (MaxWaitMs,
// TimeoutMs, SessionTimeoutMs ...), clamped to [0, MaxInt32].
func Millis(d time.Duration) int32 {
	ms := d.Milliseconds()
	switch {
	case ms < 0:
		return 0
	case ms > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(ms)
}
