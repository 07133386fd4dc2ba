// Package producer is the runtime of kafka.Writer: per-partition batches,
// one sender per broker, retries, the leader watch and idempotent produce
// (KIP-98).
//
// It knows the cluster only through the Cluster interface, and the
// Writer's message type only through Codec: the root package's adapter
// implements both, so batches hold the caller's messages without a copy
// of their own.
package producer
