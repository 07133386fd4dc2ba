package protocol

import "testing"

var offsetDeleteSamples = []sample{
	{"OffsetDelete", func() Request { return new(OffsetDeleteRequest) }, offsetDeleteSample},
}

// FuzzOffsetDelete decodes arbitrary bytes as an OffsetDelete request and
// response. Decoding must not panic, and whatever decodes must encode and
// decode again to the same value.
func FuzzOffsetDelete(f *testing.F) {
	seedSamples(f, offsetDeleteSamples, true)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzSamples(t, data, offsetDeleteSamples, true) })
}
