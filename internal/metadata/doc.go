// Package metadata holds what the process knows of a Kafka cluster,
// without any I/O: the one metadata view of the cluster (Cache) — the
// brokers, partitions and topic incarnations learned from Metadata
// answers, merged so that leader epochs never go backwards, and the
// Metadata requests in flight that concurrent readers share (callers hand
// it the function that sends one) — and the memory of brokers that stalled
// (Stalls). Connections, dialing and the public types stay in package
// kafka.
package metadata
