package kafka

import (
	"context"
	"time"
)

// The Reader's metadata: one view per partition, the cluster cache
// (cluster.go, monotonic per topic ID), which every refresh of the Reader
// updates. Each fetcher hands what the cache says about its partition to
// its router between fetches, and acts on the metadata the router accepted
// (replicaSelector.partition): the fetcher and the router never disagree
// about the leader.
//
// Besides the refreshes the routing asks for, the Readers of a share
// re-read metadata on their own — once per share (internal/consumer), not
// per Reader or partition — while they need news that no fetch response
// carries:
//   - while a partition reads from a follower: nothing in a follower's
//     answers says it left the ISR, so a follower that left it is left
//     within one refresh (readerPinnedMetadataInterval);
//   - while a replica cools down: the ISR says when it left and came back,
//     which ends its cooldown (readerCoolingMetadataInterval) — except a
//     broker refusing its probes for long (routing.Cooldowns.Active).
// Every refresh tells the cooldowns which brokers metadata lists
// (engineShare.refresh).

// Variables so that tests can shorten them.
var (
	readerPinnedMetadataInterval = 30 * time.Second
	// readerQuietSampling bounds the time between two reads of a leader's
	// high watermarks while they do not move (internal/consumer/pace.go):
	// replica.lag.time.max.ms's default, the bound Kafka's ISR already
	// puts on a follower that stops replicating.
	readerQuietSampling           = 30 * time.Second
	readerCoolingMetadataInterval = time.Second
)

// refreshMetadata reads the metadata of topics into the cluster cache and
// tells the fetchers of the share (consumer.Runtime.Version). Callers
// asking for the same topics while a refresh is in flight share it (the
// cache's single flight): a group Reader's partitions all start at once.
func (r *Reader) refreshMetadata(ctx context.Context, topics ...string) error {
	return r.share.rt.Refresh(ctx, topics...)
}
