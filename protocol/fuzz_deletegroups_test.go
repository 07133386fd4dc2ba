package protocol

import "testing"

var deleteGroupsSamples = []sample{
	{"DeleteGroups", func() Request { return new(DeleteGroupsRequest) }, deleteGroupsSample},
}

// FuzzDeleteGroups decodes arbitrary bytes as a DeleteGroups request and
// response at every version: no panic, and what decodes re-encodes to the
// same value.
func FuzzDeleteGroups(f *testing.F) {
	seedSamples(f, deleteGroupsSamples, true)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzSamples(t, data, deleteGroupsSamples, true) })
}
