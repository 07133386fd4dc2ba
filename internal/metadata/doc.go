// Package metadata holds the one metadata view of a Kafka cluster in the
// process (Cache): the brokers, partitions and topic incarnations learned
// from Metadata answers, merged so that leader epochs never go backwards,
// and the Metadata requests in flight that concurrent readers share. It
// sends nothing itself: callers hand it the function that sends a request.
// Connections, dialing and the public types stay in package kafka.
package metadata
