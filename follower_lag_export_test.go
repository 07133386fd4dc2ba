package kafka

// ReaderTestLeaderEndRequests returns the ListOffsets requests r sent for
// the lag check (reader_runtime.go), for the integration tests.
func ReaderTestLeaderEndRequests(r *Reader) int64 { return r.share.rt.LeaderEndRequests() }
