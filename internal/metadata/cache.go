package metadata

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Cache is the one metadata view of a Kafka cluster in the process:
// every cluster (Reader, ConsumerGroup, the Transport of Writers and
// Clients) with the same bootstrap addresses shares it, so leader epochs
// stay monotonic across all of them (a Writer never undoes what a Reader
// learned) and concurrent refreshes of the same topics, from any of them,
// send one Metadata request (shared). Connections are not part of it: each
// cluster keeps its own control connections, dialed with its own settings.
type Cache struct {
	key  string // in caches; "" for an unshared cache
	refs int    // guarded by caches.mu

	mu sync.Mutex
	// clusterID is the ID the answers carried ("" before one did): the
	// cache is keyed by bootstrap addresses, and another cluster at the
	// same addresses (recreated, or a failover target behind one DNS name)
	// must not be read through what was learned of the first.
	clusterID    string
	brokers      map[int]Broker
	listed       []int // the brokers of the latest answer that listed any
	partitions   map[partitionKey]Partition
	topics       map[string][]int // partition ids per topic, sorted
	incarnations map[string]topicIncarnation
	retired      map[[16]byte]bool    // topic IDs of deleted incarnations
	fresh        map[string]time.Time // when each topic was last read
	flights      map[string]*flight   // reads in flight, by topics
	// changes counts the merges that may have changed a broker, a
	// partition or a topic's incarnation (Changes).
	changes uint64
}

// topicIncarnation is the topic ID a topic's cached partitions belong to
// (zero when no answer carried one: Metadata before v10), and how many
// different IDs the cache has seen for the topic's name.
type topicIncarnation struct {
	id         [16]byte
	generation int
}

// flight is a Metadata request in flight that others may join.
type flight struct {
	done   chan struct{}
	sent   time.Time
	joined int // callers waiting for it besides the sender, guarded by mu
	resp   *protocol.MetadataResponse
	err    error
}

// caches holds the shared caches by bootstrap addresses.
var caches struct {
	mu sync.Mutex
	m  map[string]*Cache
}

// New returns a cache of its own, shared with nobody.
func New() *Cache {
	return &Cache{
		brokers:      map[int]Broker{},
		partitions:   map[partitionKey]Partition{},
		topics:       map[string][]int{},
		incarnations: map[string]topicIncarnation{},
		retired:      map[[16]byte]bool{},
		fresh:        map[string]time.Time{},
		flights:      map[string]*flight{},
	}
}

// Acquire returns the cache of the cluster at bootstrap (the
// same whatever the order of the addresses), counting a reference that
// Release gives back. Without addresses the cache is not shared.
func Acquire(bootstrap []string) *Cache {
	if len(bootstrap) == 0 {
		return New()
	}
	key := bootstrapKey(bootstrap)
	caches.mu.Lock()
	defer caches.mu.Unlock()
	mc := caches.m[key]
	if mc == nil {
		mc = New()
		mc.key = key
		if caches.m == nil {
			caches.m = map[string]*Cache{}
		}
		caches.m[key] = mc
	}
	mc.refs++
	return mc
}

// Release gives back a reference of Acquire; the cache is
// forgotten when the last user is gone.
func (c *Cache) Release() {
	if c.key == "" {
		return
	}
	caches.mu.Lock()
	defer caches.mu.Unlock()
	if c.refs--; c.refs == 0 && caches.m[c.key] == c {
		delete(caches.m, c.key)
	}
}

// Ask is a Metadata request a user of the cache wants answered.
type Ask struct {
	// Who names the credentials the request is sent with: brokers may
	// hide topics from some users, and a request over other TLS settings
	// may fail where this one would not, so only callers with the same
	// ones share a request.
	Who        string
	Topics     []string // nil: every topic
	AutoCreate bool
	// SentAfter: only an answer to a request sent at or after it will do.
	SentAfter time.Time
}

// Shared runs send, the Metadata request ask describes, unless a request
// for the same topics and user sent at or after ask.SentAfter is in
// flight, whose answer it then returns; the answer is merged into the
// cache. A request sent before SentAfter may miss a change the caller made
// (a topic it just created): the caller waits for it to end and joins or
// sends the next one. A caller joining a request whose sender gave up (its
// context ended) sends its own.
func (c *Cache) Shared(ctx context.Context, ask Ask, send func(context.Context) (*protocol.MetadataResponse, error)) (*protocol.MetadataResponse, error) {
	key := ask.key()
	sentAfter := ask.SentAfter
	c.mu.Lock()
	for c.flights[key] != nil {
		f := c.flights[key]
		f.joined++
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		usable := !f.sent.Before(sentAfter)
		if usable && (f.err == nil || (!errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded))) {
			return f.resp, f.err
		}
		c.mu.Lock()
	}
	f := &flight{done: make(chan struct{}), sent: time.Now()}
	c.flights[key] = f
	c.mu.Unlock()

	f.resp, f.err = send(ctx)
	if f.err == nil {
		c.MergeAnswer(f.resp)
	}
	c.mu.Lock()
	delete(c.flights, key)
	c.mu.Unlock()
	close(f.done)
	return f.resp, f.err
}

// ReadAt reports when topic was last read (zero: never).
func (c *Cache) ReadAt(topic string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fresh[topic]
}

// PartitionCount returns how many partitions of topic the cache knows.
func (c *Cache) PartitionCount(topic string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids, ok := c.topics[topic]
	return len(ids), ok
}

// Brokers returns the cached brokers.
func (c *Cache) Brokers() []Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Broker, 0, len(c.brokers))
	for _, b := range c.brokers {
		out = append(out, b)
	}
	return out
}

// EachBroker calls fn with every cached broker, under the cache's lock: fn
// must not call the cache.
func (c *Cache) EachBroker(fn func(Broker)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.brokers {
		fn(b)
	}
}

// BrokerAt returns the cached broker listening at host:port.
func (c *Cache) BrokerAt(host string, port int) (Broker, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.brokers {
		if b.Host == host && b.Port == port {
			return b, true
		}
	}
	return Broker{}, false
}

// Racks returns the rack of every broker seen in metadata.
func (c *Cache) Racks() map[int]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]string, len(c.brokers))
	for id, b := range c.brokers {
		out[id] = b.Rack
	}
	return out
}

// Listed returns the IDs of the brokers the latest Metadata answer
// listed (every broker the answering one knows alive); brokers keeps the
// address of every broker ever seen.
func (c *Cache) Listed() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listed
}

// MergeAnswer merges a Metadata answer, first forgetting the cluster the
// cache knew if the answer comes from another one.
func (c *Cache) MergeAnswer(md *protocol.MetadataResponse) {
	if md.ClusterID != nil && *md.ClusterID != "" {
		c.seenCluster(*md.ClusterID)
	}
	c.Merge(md.Brokers, md.Topics)
}

// seenCluster records that an answer came from cluster id. From another
// cluster than before, the brokers, partitions and topic IDs cached are
// forgotten; each topic's incarnation generation is kept and moves on at
// the next answer, so a Reader knows its offsets belong to a log that is
// gone (as for a topic deleted and created again).
func (c *Cache) seenCluster(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clusterID == id {
		return
	}
	if c.clusterID != "" {
		c.changes++
		clear(c.brokers)
		clear(c.partitions)
		clear(c.topics)
		clear(c.retired)
		clear(c.fresh)
		for name, inc := range c.incarnations {
			// No ID: the next one is new whatever it is, without
			// retiring anything.
			c.incarnations[name] = topicIncarnation{generation: inc.generation}
		}
	}
	c.clusterID = id
}

// Merge folds a metadata answer into the cache. Per topic, the cache
// follows one incarnation, named by its topic ID (Metadata v10+):
//
//   - an answer naming a different ID than the cached one is a topic that
//     was deleted and created again (its leader epochs restart at 0): it
//     replaces the topic's cached partitions whatever their epochs, and the
//     old ID is retired;
//   - an answer naming a retired ID (a broker that has not yet learned of
//     the deletion) is ignored;
//   - within an incarnation (or without IDs), a partition's entry is only
//     replaced by an answer of the same or a newer leader epoch: the
//     cached epoch is a floor that never goes down. An answer without an
//     epoch (-1: brokers before KIP-320) replaces only an entry without one
//     either, since nothing says it is not older.
//
// A leaderless answer (leader -1) follows the same rule, at the same epoch
// too: KRaft and ZooKeeper controllers bump the leader epoch when they take
// leadership away, and a broker reports a partition leaderless at the
// current epoch when that epoch's leader is no longer alive; either way it
// is news the Reader must see (to stop fetching from a leader that is gone
// and keep refreshing), not a stale answer. An older leaderless answer is
// ignored like any older one.
func (c *Cache) Merge(brokers []protocol.MetadataResponseBroker, topics []protocol.MetadataResponseTopic) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	// A cached partition names brokers by value (an unlisted one by its ID
	// only): it can be kept as it is only while the same brokers are
	// listed, unchanged.
	sameBrokers := len(brokers) > 0 && len(brokers) == len(c.listed)
	for _, b := range brokers {
		old, ok := c.brokers[int(b.NodeID)]
		if !ok || old != MakeBroker(b) || !slices.Contains(c.listed, int(b.NodeID)) {
			sameBrokers = false
			break
		}
	}
	if len(brokers) > 0 && !sameBrokers {
		c.changes++
	}
	if len(brokers) > 0 {
		c.listed = make([]int, len(brokers))
	}
	for i, b := range brokers {
		c.brokers[int(b.NodeID)] = MakeBroker(b)
		c.listed[i] = int(b.NodeID)
	}
	md := &protocol.MetadataResponse{Brokers: brokers}
	for i := range topics {
		t := &topics[i]
		if t.ErrorCode != 0 {
			continue
		}
		inc := c.incarnations[t.Name]
		fresh := false
		if t.TopicID != ([16]byte{}) {
			if c.retired[t.TopicID] {
				continue // an earlier incarnation, from a lagging broker
			}
			if t.TopicID != inc.id {
				if inc.id != ([16]byte{}) {
					c.retired[inc.id] = true
					fresh = true
				}
				inc = topicIncarnation{id: t.TopicID, generation: inc.generation + 1}
				c.incarnations[t.Name] = inc
			}
		}
		if fresh {
			for _, id := range c.topics[t.Name] {
				delete(c.partitions, partitionKey{t.Name, id})
			}
			delete(c.topics, t.Name)
		}
		c.fresh[t.Name] = now
		if sameBrokers && !fresh && c.unchanged(t) {
			// The periodic re-read of a stable cluster: nothing to
			// convert, sort or replace.
			continue
		}
		c.changes++
		seen := map[int]bool{}
		ids := make([]int, 0, len(t.Partitions))
		for _, p := range MakePartitions(md, t) {
			tp := partitionKey{p.Topic, p.ID}
			if old, ok := c.partitions[tp]; !ok || newerOrSame(p, old) {
				c.partitions[tp] = p
			}
			seen[p.ID] = true
			ids = append(ids, p.ID)
		}
		// Partitions are only ever added to a topic: one missing from a
		// lagging broker's answer is still there.
		for _, id := range c.topics[t.Name] {
			if !seen[id] {
				ids = append(ids, id)
			}
		}
		sort.Ints(ids)
		c.topics[t.Name] = ids
	}
}

// Changes counts the merges that may have changed what the cache holds: a
// merge that only confirmed it (the periodic re-read of a stable cluster)
// leaves it as it was, so that its readers can skip looking again.
func (c *Cache) Changes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes
}

// unchanged reports whether t's answer says of each of its partitions what
// the cache holds already, and lists all the cached ones; c.mu held.
func (c *Cache) unchanged(t *protocol.MetadataResponseTopic) bool {
	if len(t.Partitions) != len(c.topics[t.Name]) {
		return false
	}
	for i := range t.Partitions {
		p := &t.Partitions[i]
		old, ok := c.partitions[partitionKey{t.Name, int(p.PartitionIndex)}]
		if !ok || old.LeaderEpoch != int(p.LeaderEpoch) || old.Leader.ID != int(p.LeaderID) || old.ErrorCode != p.ErrorCode ||
			!sameIDs(old.Replicas, p.ReplicaNodes) || !sameIDs(old.Isr, p.IsrNodes) || !sameIDs(old.OfflineReplicas, p.OfflineReplicas) {
			return false
		}
	}
	return true
}

// sameIDs reports whether brokers are ids, in order.
func sameIDs(brokers []Broker, ids []int32) bool {
	if len(brokers) != len(ids) {
		return false
	}
	for i, b := range brokers {
		if b.ID != int(ids[i]) {
			return false
		}
	}
	return true
}

// newerOrSame reports whether answer p may replace the cached entry old of
// the same partition and topic incarnation (see Merge).
func newerOrSame(p, old Partition) bool {
	if p.LeaderEpoch < 0 {
		return old.LeaderEpoch < 0
	}
	return p.LeaderEpoch >= old.LeaderEpoch
}

// TopicID returns the ID of the topic incarnation the cached partitions of
// topic belong to, and its generation: 0 while no answer carried an ID,
// then 1, and one more each time the topic was found deleted and created
// again. A fetcher that sees the generation change knows its offsets
// belong to a topic that no longer exists.
func (c *Cache) TopicID(topic string) (id [16]byte, generation int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc := c.incarnations[topic]
	return inc.id, inc.generation
}

// Partition returns the cached metadata of one partition.
func (c *Cache) Partition(topic string, id int) (Partition, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.partitions[partitionKey{topic, id}]
	return p, ok
}

// TopicPartitions returns the cached partitions of topic, in id order.
func (c *Cache) TopicPartitions(topic string) ([]Partition, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids, ok := c.topics[topic]
	if !ok {
		return nil, false
	}
	out := make([]Partition, 0, len(ids))
	for _, id := range ids {
		out = append(out, c.partitions[partitionKey{topic, id}])
	}
	return out, true
}

// Broker returns a cached broker.
func (c *Cache) Broker(id int) (Broker, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.brokers[id]
	return b, ok
}

// partitionKey names a partition in the cache.
type partitionKey struct {
	topic string
	id    int
}

// key names the requests ask may share: the same user, topics and
// auto-creation.
func (ask Ask) key() string {
	key := ask.Who + "\x03\x01" // every topic
	if ask.Topics != nil {
		key = ask.Who + "\x03" + strings.Join(ask.Topics, "\x00")
	}
	if ask.AutoCreate {
		key += "\x02"
	}
	return key
}

// Joined returns how many callers besides its sender wait for the request
// ask would share (-1: none in flight).
func (c *Cache) Joined(ask Ask) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[ask.key()]; f != nil {
		return f.joined
	}
	return -1
}

// bootstrapKey names the cluster at bootstrap, whatever the order of the
// addresses.
func bootstrapKey(bootstrap []string) string {
	addrs := append([]string(nil), bootstrap...)
	sort.Strings(addrs)
	return strings.Join(addrs, ",")
}

// InUse reports whether a cache of the cluster at bootstrap is held (by
// Acquire) by anyone.
func InUse(bootstrap []string) bool {
	caches.mu.Lock()
	defer caches.mu.Unlock()
	return caches.m[bootstrapKey(bootstrap)] != nil
}
