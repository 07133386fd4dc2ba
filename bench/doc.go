// Package bench compares this client's record decoding with other Go Kafka
// clients (franz-go, segmentio/kafka-go) on the same bytes. Package e2e and
// cmd/e2e hold the end-to-end consume benchmark against a real cluster.
//
// It is a module of its own so that the peer clients stay benchmark-only
// dependencies: nothing in the library imports them. The benchmarks are in
// the test files; RESULTS.md holds the figures and how to reproduce them
// (make bench-peers at the top of the repository).
package bench
