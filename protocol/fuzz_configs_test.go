package protocol

import "testing"

// configAdminSamples are the config-changing messages, which the admin
// fuzz target of createtopics_test.go does not cover.
var configAdminSamples = []sample{
	{"AlterConfigs", func() Request { return new(AlterConfigsRequest) }, alterConfigsSample},
	{"IncrementalAlterConfigs", func() Request { return new(IncrementalAlterConfigsRequest) }, incrementalAlterConfigsSample},
}

// FuzzConfigAdminMessages decodes arbitrary bytes as AlterConfigs and
// IncrementalAlterConfigs requests and responses at every version: no
// panic, and whatever decodes re-encodes to the same value.
func FuzzConfigAdminMessages(f *testing.F) {
	seedSamples(f, configAdminSamples, true)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzSamples(t, data, configAdminSamples, true) })
}
