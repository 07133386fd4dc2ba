package kafka

import (
	"context"
	"sync/atomic"
	"time"
)

// The Reader's metadata: one view per partition, the cluster cache
// (cluster.go, monotonic per topic ID), which every refresh of the Reader
// updates. Each fetcher hands what the cache says about its partition to
// its router between fetches, and acts on the metadata the router accepted
// (replicaSelector.partition): the fetcher and the router never disagree
// about the leader.
//
// Besides the refreshes the routing asks for, the Reader re-reads metadata
// on its own — once per Reader, not per partition — while it needs news
// that no fetch response carries:
//   - while a partition reads from a follower: nothing in a follower's
//     answers says it left the ISR, so a follower that left it is left
//     within one refresh (readerPinnedMetadataInterval);
//   - while a replica cools down: the ISR says when it left and came back,
//     which ends its cooldown (readerCoolingMetadataInterval) — except a
//     broker refusing its probes for long (routing.Cooldowns.Active).
// Every refresh tells the cooldowns which brokers metadata lists.

// Variables so that tests can shorten them.
var (
	readerPinnedMetadataInterval  = 30 * time.Second
	readerCoolingMetadataInterval = time.Second
	readerMetadataTick            = 100 * time.Millisecond
)

// readerMetadata counts the Reader's metadata refreshes, so that fetchers
// notice one made by anyone.
type readerMetadata struct {
	version   atomic.Uint64
	refreshed atomic.Int64 // unix nanoseconds of the latest refresh
}

// refreshMetadata reads the metadata of topics into the cluster cache and
// tells the fetchers. Callers asking for the same topics while a refresh
// is in flight share it (the cache's single flight): a group Reader's
// partitions all start at once.
func (r *Reader) refreshMetadata(ctx context.Context, topics ...string) error {
	err := r.cluster.refresh(ctx, topics...)
	if err == nil {
		r.meta.refreshed.Store(time.Now().UnixNano())
		r.meta.version.Add(1)
		r.cooldownsSawMetadata()
	}
	return err
}

// metadataLoop re-reads the metadata of the topics the Reader fetches while
// a partition is on a follower or a replica cools down, until ctx ends.
func (r *Reader) metadataLoop(ctx context.Context) {
	tick := time.NewTicker(readerMetadataTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		var every time.Duration
		switch {
		case r.cooldown.Active(now):
			every = readerCoolingMetadataInterval
		case r.stats.onFollower():
			every = readerPinnedMetadataInterval
		default:
			continue
		}
		if now.Sub(time.Unix(0, r.meta.refreshed.Load())) < every {
			continue
		}
		topics := r.stats.topics()
		if len(topics) == 0 {
			continue
		}
		if err := r.refreshMetadata(ctx, topics...); err != nil && ctx.Err() == nil {
			r.errorf("kafka reader: refreshing metadata of %v: %v", topics, err)
		}
	}
}
