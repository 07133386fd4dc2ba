// Package group runs a member of a Kafka consumer group: it finds the
// group's coordinator, joins (JoinGroup, the leader's assignment,
// SyncGroup), resolves the start offsets, heartbeats, watches the topics'
// partition counts, commits and leaves, and hands out one Generation at a
// time.
//
// It does no I/O of its own and never sees the client's types: the caller
// (package kafka's ConsumerGroup) gives it the connections, the metadata
// cache, the balancers, its error classification and its loggers through
// the narrow interfaces of deps.go. Requests and responses are protocol's.
package group
