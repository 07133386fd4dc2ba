package kafka

import (
	"encoding/binary"
	"hash"
	"hash/crc32"
	"hash/fnv"
	"math/rand"
	"sort"
	"sync"
)

// Balancer decides which partition of a topic a Writer sends a message to.
//
// Implementations must be safe for concurrent use by multiple goroutines.
type Balancer interface {
	// Balance returns the partition that msg should be written to, chosen
	// among partitions (never empty when called by a Writer).
	//
	// Stateful balancers notice that a topic was resized by seeing a
	// different partition set, so use one balancer per topic rather than
	// sharing one instance across topics.
	Balance(msg Message, partitions ...int) (partition int)
}

// KeyedBalancer is a Balancer that tells which messages it places by their
// content, typically by hashing the key. A Writer with a Rack gives the
// Balancer every partition of the topic for those, so that a key keeps its
// partition, and only the partitions led in its rack for the others
// (rack-aware partitioning, KIP-1123). A Balancer that does not implement
// KeyedBalancer is taken to place by content exactly the messages that have
// a key (Key not nil); implement it when that rule does not fit, for
// example with Keyed returning true for every message to keep a rack-aware
// Writer from narrowing the partitions at all.
//
// The built-in balancers place by content: Hash and ReferenceHash the
// messages with a key (Key not nil); Murmur2Balancer the same, and every
// message when Consistent; CRC32Balancer the messages with a non-empty key,
// and every message when Consistent. RoundRobin and LeastBytes place none
// by content.
type KeyedBalancer interface {
	Balancer
	// Keyed reports whether msg's partition follows from its content.
	Keyed(msg Message) bool
}

// keyed reports whether b places msg by content (KeyedBalancer).
func keyed(b Balancer, msg *Message) bool {
	if kb, ok := b.(KeyedBalancer); ok {
		return kb.Keyed(*msg)
	}
	return msg.Key != nil
}

// BalancerFunc lets a plain function serve as a Balancer.
type BalancerFunc func(Message, ...int) int

// Balance calls f.
func (f BalancerFunc) Balance(msg Message, partitions ...int) int {
	return f(msg, partitions...)
}

// RoundRobin is a Balancer that cycles through the partitions in the order
// they are given, ignoring message content.
//
// ChunkSize, when greater than 1, sends that many consecutive messages to the
// same partition before moving on, which gives larger batches per partition.
// Values below 1 behave as 1.
type RoundRobin struct {
	ChunkSize int

	mutex   sync.Mutex
	counter uint64
}

// Balance satisfies the Balancer interface.
func (rr *RoundRobin) Balance(msg Message, partitions ...int) int {
	return rr.next(partitions)
}

// Keyed satisfies KeyedBalancer: RoundRobin ignores message content.
func (rr *RoundRobin) Keyed(Message) bool { return false }

func (rr *RoundRobin) next(partitions []int) int {
	rr.mutex.Lock()
	n := rr.counter
	rr.counter++
	chunk := rr.ChunkSize
	rr.mutex.Unlock()

	if chunk < 1 {
		chunk = 1
	}
	return partitions[(n/uint64(chunk))%uint64(len(partitions))]
}

// LeastBytes is a Balancer that sends each message to the partition that has
// so far received the fewest bytes (key plus value) from this balancer; ties go
// to the lowest partition number.
//
// The counts are local to the balancer: several producers each using their
// own LeastBytes only balance well if each of them produces a balanced load.
// The counts restart from zero whenever the set of partitions changes.
type LeastBytes struct {
	mutex    sync.Mutex
	counters []leastBytesCounter // sorted by partition
}

type leastBytesCounter struct {
	partition int
	bytes     uint64
}

// Balance satisfies the Balancer interface.
func (lb *LeastBytes) Balance(msg Message, partitions ...int) int {
	lb.mutex.Lock()
	defer lb.mutex.Unlock()

	if !lb.samePartitions(partitions) {
		lb.counters = make([]leastBytesCounter, len(partitions))
		for i, p := range partitions {
			lb.counters[i].partition = p
		}
		sort.Slice(lb.counters, func(i, j int) bool {
			return lb.counters[i].partition < lb.counters[j].partition
		})
	}

	min := 0
	for i := 1; i < len(lb.counters); i++ {
		if lb.counters[i].bytes < lb.counters[min].bytes {
			min = i
		}
	}
	c := &lb.counters[min]
	c.bytes += uint64(len(msg.Key)) + uint64(len(msg.Value))
	return c.partition
}

// Keyed satisfies KeyedBalancer: LeastBytes ignores message content.
func (lb *LeastBytes) Keyed(Message) bool { return false }

// samePartitions reports whether partitions is the set the counters were
// built for. Writers pass partitions sorted, which takes the fast path.
func (lb *LeastBytes) samePartitions(partitions []int) bool {
	if len(partitions) != len(lb.counters) {
		return false
	}
	sorted := true
	for i, p := range partitions {
		if lb.counters[i].partition != p {
			sorted = false
			break
		}
	}
	if sorted {
		return true
	}
	ps := append([]int(nil), partitions...)
	sort.Ints(ps)
	for i, p := range ps {
		if lb.counters[i].partition != p {
			return false
		}
	}
	return true
}

// fnv1aPool recycles the default hashers of Hash and ReferenceHash.
var fnv1aPool = sync.Pool{New: func() interface{} { return fnv.New32a() }}

// hashKey hashes key with h, or with a pooled FNV-1a hasher when h is nil. A
// caller-supplied hasher is stateful, so it is used under lock.
func hashKey(h hash.Hash32, lock *sync.Mutex, key []byte) uint32 {
	if h == nil {
		f := fnv1aPool.Get().(hash.Hash32)
		defer fnv1aPool.Put(f)
		h = f
	} else {
		lock.Lock()
		defer lock.Unlock()
	}
	h.Reset()
	// hash.Hash documents that Write never returns an error.
	h.Write(key)
	return h.Sum32()
}

// Hash is a Balancer that routes messages with the same key to the same
// partition:
//
//	abs(int32(Hasher.Sum32(key)) % len(partitions)) => index in partitions
//
// This is the rule of Sarama's default hash partitioner and of
// segmentio/kafka-go, so keyed messages land on the same partitions as they
// did with either library. Hasher defaults to FNV-1a (hash/fnv New32a); if set,
// it must not be changed once the balancer is in use. Messages with a nil key
// are distributed round-robin.
type Hash struct {
	rr     RoundRobin
	Hasher hash.Hash32

	// lock serializes use of Hasher, which keeps state between Reset and
	// Sum32.
	lock sync.Mutex
}

// Balance satisfies the Balancer interface.
func (h *Hash) Balance(msg Message, partitions ...int) int {
	if msg.Key == nil {
		return h.rr.Balance(msg, partitions...)
	}
	// The sign conversion matters: Sarama takes the remainder of the signed
	// hash and then drops the sign, which differs from an unsigned modulo.
	idx := int32(hashKey(h.Hasher, &h.lock, msg.Key)) % int32(len(partitions))
	if idx < 0 {
		idx = -idx
	}
	return partitions[idx]
}

// Keyed satisfies KeyedBalancer: a message with a key is hashed.
func (h *Hash) Keyed(msg Message) bool { return msg.Key != nil }

// ReferenceHash is a Balancer that routes messages with the same key to the
// same partition, using the rule of Sarama's reference hash partitioner:
//
//	(int32(Hasher.Sum32(key)) & 0x7fffffff) % len(partitions) => index in partitions
//
// Hasher defaults to FNV-1a and must not be changed once the balancer is in
// use. Messages with a nil key go to a random partition.
type ReferenceHash struct {
	rr     randomBalancer
	Hasher hash.Hash32

	// lock serializes use of Hasher.
	lock sync.Mutex
}

// Balance satisfies the Balancer interface.
func (h *ReferenceHash) Balance(msg Message, partitions ...int) int {
	if msg.Key == nil {
		return h.rr.Balance(msg, partitions...)
	}
	idx := (hashKey(h.Hasher, &h.lock, msg.Key) & 0x7fffffff) % uint32(len(partitions))
	return partitions[idx]
}

// Keyed satisfies KeyedBalancer: a message with a key is hashed.
func (h *ReferenceHash) Keyed(msg Message) bool { return msg.Key != nil }

// randomBalancer picks a partition uniformly at random. A non-zero mock is
// returned instead, so tests can observe when the random path was taken.
type randomBalancer struct {
	mock int
}

func (b randomBalancer) Balance(msg Message, partitions ...int) (partition int) {
	if b.mock != 0 {
		return b.mock
	}
	// The package-level source of math/rand is safe for concurrent use.
	return partitions[rand.Intn(len(partitions))]
}

// CRC32Balancer is a Balancer that hashes keys with CRC-32 (IEEE), the way the
// partitioners of librdkafka do, and so picks the same partitions as
// confluent-kafka-go and the other librdkafka-based clients:
//
//	crc32.ChecksumIEEE(key) % len(partitions) => index in partitions
//
// With Consistent false (the default) it matches librdkafka's
// "consistent_random" partitioner: messages with a nil or empty key go to a
// random partition. With Consistent true it matches "consistent": keyless
// messages are hashed like any other key and so all go to one partition, which
// easily becomes a hot spot unless every message has a key.
type CRC32Balancer struct {
	Consistent bool
	random     randomBalancer
}

// Balance satisfies the Balancer interface.
func (b CRC32Balancer) Balance(msg Message, partitions ...int) (partition int) {
	// librdkafka makes no difference between a nil and an empty key.
	if len(msg.Key) == 0 && !b.Consistent {
		return b.random.Balance(msg, partitions...)
	}
	return partitions[crc32.ChecksumIEEE(msg.Key)%uint32(len(partitions))]
}

// Keyed satisfies KeyedBalancer: a message with a non-empty key is hashed,
// and with Consistent every message.
func (b CRC32Balancer) Keyed(msg Message) bool { return b.Consistent || len(msg.Key) > 0 }

// Murmur2Balancer is a Balancer that hashes keys with murmur2 the way the
// default partitioner of the Java client does, and so picks the same
// partitions as Java producers (and librdkafka's "murmur2" partitioners):
//
//	(murmur2(key) & 0x7fffffff) % len(partitions) => index in partitions
//
// With Consistent false (the default) a message with a nil key goes to a
// random partition, like librdkafka's "murmur2_random" (the Java client spreads
// such messages itself, without hashing). With Consistent true, like
// librdkafka's "murmur2", nil keys are hashed as empty ones and so all go to one
// partition, which easily becomes a hot spot. An empty but non-nil key is a real
// key in both modes.
type Murmur2Balancer struct {
	Consistent bool
	random     randomBalancer
}

// Balance satisfies the Balancer interface.
func (b Murmur2Balancer) Balance(msg Message, partitions ...int) (partition int) {
	if msg.Key == nil && !b.Consistent {
		return b.random.Balance(msg, partitions...)
	}
	return partitions[(murmur2(msg.Key)&0x7fffffff)%uint32(len(partitions))]
}

// Keyed satisfies KeyedBalancer: a message with a key is hashed, and with
// Consistent every message.
func (b Murmur2Balancer) Keyed(msg Message) bool { return b.Consistent || msg.Key != nil }

// murmur2 is the 32-bit MurmurHash2 with the seed used by Kafka's Java client
// (Utils.murmur2): little-endian 4-byte blocks, then the 1-3 trailing bytes.
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		mul  = 0x5bd1e995
		rot  = 24
	)
	h := uint32(seed) ^ uint32(len(data))

	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= mul
		k ^= k >> rot
		k *= mul
		h = h*mul ^ k
		data = data[4:]
	}

	switch len(data) {
	case 3:
		h ^= uint32(data[2])<<16 | uint32(data[1])<<8 | uint32(data[0])
		h *= mul
	case 2:
		h ^= uint32(data[1])<<8 | uint32(data[0])
		h *= mul
	case 1:
		h ^= uint32(data[0])
		h *= mul
	}

	h ^= h >> 13
	h *= mul
	h ^= h >> 15
	return h
}
