package fakebroker

import (
	"encoding/binary"
	"slices"
)

// topic is one topic of the model.
type topic struct {
	name       string
	id         [16]byte
	partitions []*partition
}

// partition is the replica set, leadership and log of one partition. The
// leader holds the whole log; a follower holds the prefix up to its high
// watermark (see hw), which is how a lagging follower is modelled.
type partition struct {
	leader   int32
	epoch    int32
	replicas []int32
	isr      []int32
	offline  []int32

	log      []storedBatch
	logStart int64
	logEnd   int64        // next offset
	epochs   []epochStart // leader epoch cache, ascending
	hwOf     map[int32]int64
}

type epochStart struct {
	epoch int32
	start int64
}

// PartitionState is a partition's replica set and leadership.
type PartitionState struct {
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	Offline     []int32
}

// LogState is the log of a partition as one replica sees it.
type LogState struct {
	LogStart, HighWatermark, LogEnd int64
}

// CreateTopic creates a topic whose partition p has replicas
// p+1, p+2, ... (wrapping around the broker ids), led by the first, in
// leader epoch 0, all in sync.
func (c *Cluster) CreateTopic(name string, partitions, replicationFactor int) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if code := c.createTopic(name, partitions, replicationFactor); code != errNone {
		c.fatalf("CreateTopic(%q, %d, %d): error code %d", name, partitions, replicationFactor, code)
	}
}

func (c *Cluster) createTopic(name string, partitions, rf int) int16 {
	switch {
	case c.topics[name] != nil:
		return errTopicAlreadyExists
	case name == "" || partitions <= 0 || partitions > 1<<16:
		return errInvalidPartitions
	case rf <= 0 || rf > len(c.brokers):
		return errInvalidReplication
	}
	c.nextTopicID++
	t := &topic{name: name}
	// Deterministic, non-zero ids: the zero UUID means "no id" on the wire.
	// The cluster's serial makes them differ between clusters, as Kafka's
	// random ids do: a client's metadata cache outliving a test's cluster
	// must not take the next cluster's topic (on a reused port) for it.
	binary.BigEndian.PutUint64(t.id[8:], c.nextTopicID)
	binary.BigEndian.PutUint32(t.id[2:6], c.serial)
	t.id[0] = 0x7a
	n := len(c.brokers)
	for p := 0; p < partitions; p++ {
		replicas := make([]int32, rf)
		for i := range replicas {
			replicas[i] = int32((p+i)%n + 1)
		}
		t.partitions = append(t.partitions, &partition{
			leader:   replicas[0],
			replicas: replicas,
			isr:      slices.Clone(replicas),
			epochs:   []epochStart{{0, 0}},
			hwOf:     map[int32]int64{},
		})
	}
	c.topics[name] = t
	return errNone
}

// DeleteTopic removes a topic, its logs and the offsets groups committed
// for it (as Kafka's group coordinator drops them).
func (c *Cluster) DeleteTopic(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.topics, name)
	for _, g := range c.groups {
		delete(g.offsets, name)
	}
}

// TopicID returns the id the cluster gave a topic.
func (c *Cluster) TopicID(name string) [16]byte {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.topics[name]
	if t == nil {
		c.fatalf("TopicID(%q): no such topic", name)
		return [16]byte{}
	}
	return t.id
}

// part returns a partition of the model or nil; c.mu must be held.
func (c *Cluster) part(topicName string, p int32) *partition {
	t := c.topics[topicName]
	if t == nil || p < 0 || int(p) >= len(t.partitions) {
		return nil
	}
	return t.partitions[p]
}

func (c *Cluster) topicByID(id [16]byte) *topic {
	for _, t := range c.topics {
		if t.id == id {
			return t
		}
	}
	return nil
}

// mustPart is part for test helpers.
func (c *Cluster) mustPart(topicName string, p int32) *partition {
	c.t.Helper()
	pt := c.part(topicName, p)
	if pt == nil {
		c.fatalf("no partition %s/%d", topicName, p)
	}
	return pt
}

// Partition returns a partition's replica set and leadership.
func (c *Cluster) Partition(topicName string, p int32) PartitionState {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.mustPart(topicName, p)
	return PartitionState{
		Leader:      pt.leader,
		LeaderEpoch: pt.epoch,
		Replicas:    slices.Clone(pt.replicas),
		ISR:         slices.Clone(pt.isr),
		Offline:     slices.Clone(pt.offline),
	}
}

// SetPartition sets a partition's replica set and leadership as given. A
// new leader epoch starts at the current log end.
func (c *Cluster) SetPartition(topicName string, p int32, s PartitionState) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.mustPart(topicName, p)
	pt.leader = s.Leader
	pt.replicas = slices.Clone(s.Replicas)
	pt.isr = slices.Clone(s.ISR)
	pt.offline = slices.Clone(s.Offline)
	pt.setEpoch(s.LeaderEpoch)
}

// SetLeader moves leadership to broker id (made a replica and in sync if
// it was not), bumps the leader epoch and returns it.
func (c *Cluster) SetLeader(topicName string, p int32, id int32) int32 {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.mustPart(topicName, p)
	if !slices.Contains(pt.replicas, id) {
		pt.replicas = append(pt.replicas, id)
	}
	if !slices.Contains(pt.isr, id) {
		pt.isr = append(pt.isr, id)
	}
	// The new leader holds what the old one had: its own lag is forgotten.
	delete(pt.hwOf, id)
	pt.leader = id
	pt.setEpoch(pt.epoch + 1)
	return pt.epoch
}

func (pt *partition) setEpoch(e int32) {
	pt.epoch = e
	if n := len(pt.epochs); n == 0 || pt.epochs[n-1].epoch < e {
		pt.epochs = append(pt.epochs, epochStart{e, pt.logEnd})
	}
}

// SetReplicaHighWatermark makes replica id see hw as its high watermark;
// a follower then also holds the log only up to hw, so it lags the leader.
func (c *Cluster) SetReplicaHighWatermark(topicName string, p int32, id int32, hw int64) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mustPart(topicName, p).hwOf[id] = hw
}

// SetLogStartOffset moves the log start offset of every replica, as
// retention or DeleteRecords would.
func (c *Cluster) SetLogStartOffset(topicName string, p int32, off int64) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.mustPart(topicName, p)
	pt.logStart = min(max(off, 0), pt.logEnd)
}

// Log returns the log of a partition as replica id sees it.
func (c *Cluster) Log(topicName string, p int32, id int32) LogState {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.mustPart(topicName, p)
	return LogState{LogStart: pt.logStart, HighWatermark: pt.hw(id), LogEnd: pt.leo(id)}
}

// hw is the high watermark replica id knows: its own if the test set one,
// else the leader's, which is the log end unless set.
func (pt *partition) hw(id int32) int64 {
	hw, ok := pt.hwOf[id]
	if !ok {
		hw, ok = pt.hwOf[pt.leader]
	}
	if !ok {
		hw = pt.logEnd
	}
	return min(max(hw, pt.logStart), pt.logEnd)
}

// leo is the log end offset of replica id: followers hold up to their
// high watermark.
func (pt *partition) leo(id int32) int64 {
	if id == pt.leader {
		return pt.logEnd
	}
	return pt.hw(id)
}

// endOffsetFor answers OffsetForLeaderEpoch like Kafka's leader epoch
// cache: the largest epoch <= requested and the start of the next one.
func (pt *partition) endOffsetFor(requested int32) (int32, int64) {
	if requested < 0 || len(pt.epochs) == 0 {
		return -1, -1
	}
	if last := pt.epochs[len(pt.epochs)-1]; requested >= last.epoch {
		if requested == last.epoch {
			return last.epoch, pt.logEnd
		}
		return -1, -1
	}
	i, _ := slices.BinarySearchFunc(pt.epochs, requested, func(e epochStart, r int32) int {
		if e.epoch <= r {
			return -1
		}
		return 1
	})
	// pt.epochs[i] is the first epoch above requested.
	if i == 0 {
		return requested, pt.epochs[0].start
	}
	return pt.epochs[i-1].epoch, pt.epochs[i].start
}

// checkEpoch compares a request's current leader epoch with the
// partition's (-1: the client does not know it, no check).
func (pt *partition) checkEpoch(current int32) int16 {
	switch {
	case current < 0 || current == pt.epoch:
		return errNone
	case current < pt.epoch:
		return errFencedLeaderEpoch
	default:
		return errUnknownLeaderEpoch
	}
}
