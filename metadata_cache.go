package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// metadataCache is the one metadata view of a Kafka cluster in the process:
// every cluster (Reader, ConsumerGroup, the Transport of Writers and
// Clients) with the same bootstrap addresses shares it, so leader epochs
// stay monotonic across all of them (a Writer never undoes what a Reader
// learned) and concurrent refreshes of the same topics, from any of them,
// send one Metadata request (shared). Connections are not part of it: each
// cluster keeps its own control connections, dialed with its own settings.
type metadataCache struct {
	key  string // in metadataCaches; "" for an unshared cache
	refs int    // guarded by metadataCaches.mu

	mu sync.Mutex
	// clusterID is the ID the answers carried ("" before one did): the
	// cache is keyed by bootstrap addresses, and another cluster at the
	// same addresses (recreated, or a failover target behind one DNS name)
	// must not be read through what was learned of the first.
	clusterID    string
	brokers      map[int]Broker
	listed       []int // the brokers of the latest answer that listed any
	partitions   map[topicPartition]Partition
	topics       map[string][]int // partition ids per topic, sorted
	incarnations map[string]topicIncarnation
	retired      map[[16]byte]bool          // topic IDs of deleted incarnations
	fresh        map[string]time.Time       // when each topic was last read
	flights      map[string]*metadataFlight // reads in flight, by topics
}

// topicIncarnation is the topic ID a topic's cached partitions belong to
// (zero when no answer carried one: Metadata before v10), and how many
// different IDs the cache has seen for the topic's name.
type topicIncarnation struct {
	id         [16]byte
	generation int
}

// metadataFlight is a Metadata request in flight that others may join.
type metadataFlight struct {
	done   chan struct{}
	sent   time.Time
	joined int // callers waiting for it besides the sender, guarded by mu
	resp   *protocol.MetadataResponse
	err    error
}

// metadataCaches holds the shared caches by bootstrap addresses.
var metadataCaches struct {
	mu sync.Mutex
	m  map[string]*metadataCache
}

func newMetadataCache() *metadataCache {
	return &metadataCache{
		brokers:      map[int]Broker{},
		partitions:   map[topicPartition]Partition{},
		topics:       map[string][]int{},
		incarnations: map[string]topicIncarnation{},
		retired:      map[[16]byte]bool{},
		fresh:        map[string]time.Time{},
		flights:      map[string]*metadataFlight{},
	}
}

// acquireMetadataCache returns the cache of the cluster at bootstrap (the
// same whatever the order of the addresses), counting a reference that
// release gives back. Without addresses the cache is not shared.
func acquireMetadataCache(bootstrap []string) *metadataCache {
	if len(bootstrap) == 0 {
		return newMetadataCache()
	}
	addrs := append([]string(nil), bootstrap...)
	sort.Strings(addrs)
	key := strings.Join(addrs, ",")
	metadataCaches.mu.Lock()
	defer metadataCaches.mu.Unlock()
	mc := metadataCaches.m[key]
	if mc == nil {
		mc = newMetadataCache()
		mc.key = key
		if metadataCaches.m == nil {
			metadataCaches.m = map[string]*metadataCache{}
		}
		metadataCaches.m[key] = mc
	}
	mc.refs++
	return mc
}

// release gives back a reference of acquireMetadataCache; the cache is
// forgotten when the last user is gone.
func (cl *metadataCache) release() {
	if cl.key == "" {
		return
	}
	metadataCaches.mu.Lock()
	defer metadataCaches.mu.Unlock()
	if cl.refs--; cl.refs == 0 && metadataCaches.m[cl.key] == cl {
		delete(metadataCaches.m, cl.key)
	}
}

// metadataRequest asks for topics (nil: every topic, empty: brokers only).
func metadataRequest(topics []string, autoCreate bool) *protocol.MetadataRequest {
	req := &protocol.MetadataRequest{AllowAutoTopicCreation: autoCreate}
	if topics != nil {
		req.Topics = make([]protocol.MetadataRequestTopic, len(topics))
		for i, t := range topics {
			req.Topics[i].Name = t
		}
	}
	return req
}

// metadataAsk is a Metadata request a user of the cache wants answered.
type metadataAsk struct {
	// who names the credentials the request is sent with: brokers may
	// hide topics from some users, and a request over other TLS settings
	// may fail where this one would not, so only callers with the same
	// ones share a request.
	who        string
	topics     []string // nil: every topic
	autoCreate bool
	// sentAfter: only an answer to a request sent at or after it will do.
	sentAfter time.Time
}

// shared runs send, the Metadata request ask describes, unless a request
// for the same topics and user sent at or after ask.sentAfter is in
// flight, whose answer it then returns; the answer is merged into the
// cache. A request sent before sentAfter may miss a change the caller made
// (a topic it just created): the caller waits for it to end and joins or
// sends the next one. A caller joining a request whose sender gave up (its
// context ended) sends its own.
func (cl *metadataCache) shared(ctx context.Context, ask metadataAsk, send func(context.Context) (*protocol.MetadataResponse, error)) (*protocol.MetadataResponse, error) {
	key := ask.who + "\x03\x01" // every topic
	if ask.topics != nil {
		key = ask.who + "\x03" + strings.Join(ask.topics, "\x00")
	}
	if ask.autoCreate {
		key += "\x02"
	}
	sentAfter := ask.sentAfter
	cl.mu.Lock()
	for cl.flights[key] != nil {
		f := cl.flights[key]
		f.joined++
		cl.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		usable := !f.sent.Before(sentAfter)
		if usable && (f.err == nil || (!errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded))) {
			return f.resp, f.err
		}
		cl.mu.Lock()
	}
	f := &metadataFlight{done: make(chan struct{}), sent: time.Now()}
	cl.flights[key] = f
	cl.mu.Unlock()

	f.resp, f.err = send(ctx)
	if f.err == nil {
		cl.mergeAnswer(f.resp)
	}
	cl.mu.Lock()
	delete(cl.flights, key)
	cl.mu.Unlock()
	close(f.done)
	return f.resp, f.err
}

// readAt reports when topic was last read (zero: never).
func (cl *metadataCache) readAt(topic string) time.Time {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.fresh[topic]
}

// partitionCount returns how many partitions of topic the cache knows.
func (cl *metadataCache) partitionCount(topic string) (int, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ids, ok := cl.topics[topic]
	return len(ids), ok
}

// brokerList returns the cached brokers.
func (cl *metadataCache) brokerList() []Broker {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	out := make([]Broker, 0, len(cl.brokers))
	for _, b := range cl.brokers {
		out = append(out, b)
	}
	return out
}

// eachBroker calls fn with every cached broker, under the cache's lock: fn
// must not call the cache.
func (cl *metadataCache) eachBroker(fn func(Broker)) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, b := range cl.brokers {
		fn(b)
	}
}

// brokerAt returns the cached broker listening at host:port.
func (cl *metadataCache) brokerAt(host string, port int) (Broker, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, b := range cl.brokers {
		if b.Host == host && b.Port == port {
			return b, true
		}
	}
	return Broker{}, false
}

// brokerRacks returns the rack of every broker seen in metadata.
func (cl *metadataCache) brokerRacks() map[int]string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	out := make(map[int]string, len(cl.brokers))
	for id, b := range cl.brokers {
		out[id] = b.Rack
	}
	return out
}

// listedBrokers returns the IDs of the brokers the latest Metadata answer
// listed (every broker the answering one knows alive); brokers keeps the
// address of every broker ever seen.
func (cl *metadataCache) listedBrokers() []int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.listed
}

// mergeAnswer merges a Metadata answer, first forgetting the cluster the
// cache knew if the answer comes from another one.
func (cl *metadataCache) mergeAnswer(md *protocol.MetadataResponse) {
	if md.ClusterID != nil && *md.ClusterID != "" {
		cl.seenCluster(*md.ClusterID)
	}
	cl.merge(md.Brokers, md.Topics)
}

// seenCluster records that an answer came from cluster id. From another
// cluster than before, the brokers, partitions and topic IDs cached are
// forgotten; each topic's incarnation generation is kept and moves on at
// the next answer, so a Reader knows its offsets belong to a log that is
// gone (as for a topic deleted and created again).
func (cl *metadataCache) seenCluster(id string) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.clusterID == id {
		return
	}
	if cl.clusterID != "" {
		clear(cl.brokers)
		clear(cl.partitions)
		clear(cl.topics)
		clear(cl.retired)
		clear(cl.fresh)
		for name, inc := range cl.incarnations {
			// No ID: the next one is new whatever it is, without
			// retiring anything.
			cl.incarnations[name] = topicIncarnation{generation: inc.generation}
		}
	}
	cl.clusterID = id
}

// merge folds a metadata answer into the cache. Per topic, the cache
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
func (cl *metadataCache) merge(brokers []protocol.MetadataResponseBroker, topics []protocol.MetadataResponseTopic) {
	now := time.Now()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(brokers) > 0 {
		cl.listed = make([]int, len(brokers))
	}
	for i, b := range brokers {
		cl.brokers[int(b.NodeID)] = makeBroker(b)
		cl.listed[i] = int(b.NodeID)
	}
	md := &protocol.MetadataResponse{Brokers: brokers}
	for i := range topics {
		t := &topics[i]
		if t.ErrorCode != 0 {
			continue
		}
		inc := cl.incarnations[t.Name]
		fresh := false
		if t.TopicID != ([16]byte{}) {
			if cl.retired[t.TopicID] {
				continue // an earlier incarnation, from a lagging broker
			}
			if t.TopicID != inc.id {
				if inc.id != ([16]byte{}) {
					cl.retired[inc.id] = true
					fresh = true
				}
				inc = topicIncarnation{id: t.TopicID, generation: inc.generation + 1}
				cl.incarnations[t.Name] = inc
			}
		}
		if fresh {
			for _, id := range cl.topics[t.Name] {
				delete(cl.partitions, topicPartition{t.Name, id})
			}
			delete(cl.topics, t.Name)
		}
		seen := map[int]bool{}
		ids := make([]int, 0, len(t.Partitions))
		for _, p := range makePartitions(md, t) {
			tp := topicPartition{p.Topic, p.ID}
			if old, ok := cl.partitions[tp]; !ok || newerOrSame(p, old) {
				cl.partitions[tp] = p
			}
			seen[p.ID] = true
			ids = append(ids, p.ID)
		}
		// Partitions are only ever added to a topic: one missing from a
		// lagging broker's answer is still there.
		for _, id := range cl.topics[t.Name] {
			if !seen[id] {
				ids = append(ids, id)
			}
		}
		sort.Ints(ids)
		cl.topics[t.Name] = ids
		cl.fresh[t.Name] = now
	}
}

// newerOrSame reports whether answer p may replace the cached entry old of
// the same partition and topic incarnation (see merge).
func newerOrSame(p, old Partition) bool {
	if p.LeaderEpoch < 0 {
		return old.LeaderEpoch < 0
	}
	return p.LeaderEpoch >= old.LeaderEpoch
}

// topicID returns the ID of the topic incarnation the cached partitions of
// topic belong to, and its generation: 0 while no answer carried an ID,
// then 1, and one more each time the topic was found deleted and created
// again. A fetcher that sees the generation change knows its offsets
// belong to a topic that no longer exists.
func (cl *metadataCache) topicID(topic string) (id [16]byte, generation int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	inc := cl.incarnations[topic]
	return inc.id, inc.generation
}

// partition returns the cached metadata of one partition.
func (cl *metadataCache) partition(topic string, id int) (Partition, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	p, ok := cl.partitions[topicPartition{topic, id}]
	return p, ok
}

// topicPartitions returns the cached partitions of topic, in id order.
func (cl *metadataCache) topicPartitions(topic string) ([]Partition, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ids, ok := cl.topics[topic]
	if !ok {
		return nil, false
	}
	out := make([]Partition, 0, len(ids))
	for _, id := range ids {
		out = append(out, cl.partitions[topicPartition{topic, id}])
	}
	return out, true
}

// broker returns a cached broker.
func (cl *metadataCache) broker(id int) (Broker, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	b, ok := cl.brokers[id]
	return b, ok
}

// credentials names who connections dialed by d are (for metadataAsk.who):
// the SASL identity and the TLS settings. Two mechanism values print the
// same only when they hold the same settings; TLS settings are the same
// only as the same *tls.Config (a request over another TLS setup may fail
// where this one would not: a client must never get the error of another
// client's certificates or missing TLS). The string never leaves the
// process.
func credentials(d *Dialer) string {
	if d == nil {
		return ""
	}
	who := ""
	if d.SASLMechanism != nil {
		who = fmt.Sprintf("%T:%+v", d.SASLMechanism, d.SASLMechanism)
	}
	if d.TLS != nil {
		who += fmt.Sprintf("\x04tls:%p", d.TLS)
	}
	return who
}
