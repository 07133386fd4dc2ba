// Package netfault is a TCP fault proxy for tests: it stands between Kafka clients and one broker's
// client listener and breaks that path only (black hole, lost replies, latency, packet loss, a bandwidth
// cap, resets, a silent peer), while the brokers keep replicating over their own listener and stay in
// every ISR, as when a zone's network to one broker fails.
//
// A Proxy listens on one address per broker (the address the broker advertises to clients on that
// listener) and forwards to the broker's real port. Faults are set per broker with Set and undone with
// Clear, in process or through the HTTP control API (Handler, Client) that cmd/netfault serves for the
// cluster tool (`kafka-cluster netfault 2 blackhole 30s`).
//
// Every buffer is bounded: a direction that is stalled stops reading from its source, so TCP
// backpressure holds the bytes in the sender's socket buffers, as on a real path.
//
// The package imports only the standard library.
package netfault
