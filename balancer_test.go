package kafka

import (
	"hash/crc32"
	"sync"
	"testing"
)

func partitionRange(n int) []int {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i
	}
	return ps
}

func TestBalancerFunc(t *testing.T) {
	var b Balancer = BalancerFunc(func(msg Message, partitions ...int) int {
		return partitions[len(msg.Value)%len(partitions)]
	})
	if p := b.Balance(Message{Value: []byte("abcd")}, 7, 8, 9); p != 8 {
		t.Fatalf("got %d, want 8", p)
	}
}

func TestRoundRobin(t *testing.T) {
	tests := []struct {
		name       string
		chunk      int
		partitions []int
		want       []int
	}{
		{"default", 0, []int{0, 1, 2}, []int{0, 1, 2, 0, 1, 2, 0}},
		{"negative chunk", -4, []int{0, 1, 2}, []int{0, 1, 2, 0, 1, 2, 0}},
		{"chunk 1", 1, []int{5, 9}, []int{5, 9, 5, 9}},
		{"chunk 3", 3, []int{0, 1}, []int{0, 0, 0, 1, 1, 1, 0, 0}},
		{"given order", 0, []int{4, 2, 7}, []int{4, 2, 7, 4}},
		{"single", 2, []int{3}, []int{3, 3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := &RoundRobin{ChunkSize: tt.chunk}
			for i, want := range tt.want {
				if got := rr.Balance(Message{}, tt.partitions...); got != want {
					t.Fatalf("message %d: got partition %d, want %d", i, got, want)
				}
			}
		})
	}
}

func TestRoundRobinConcurrent(t *testing.T) {
	const goroutines, perGoroutine, chunk = 8, 600, 4
	partitions := partitionRange(6)
	rr := &RoundRobin{ChunkSize: chunk}

	counts := make([][]int, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		counts[g] = make([]int, len(partitions))
		wg.Add(1)
		go func(c []int) {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				c[rr.Balance(Message{}, partitions...)]++
			}
		}(counts[g])
	}
	wg.Wait()

	// 4800 messages in chunks of 4 over 6 partitions: exactly 800 each.
	for p := range partitions {
		total := 0
		for g := range counts {
			total += counts[g][p]
		}
		if total != goroutines*perGoroutine/len(partitions) {
			t.Errorf("partition %d got %d messages, want %d", p, total, goroutines*perGoroutine/len(partitions))
		}
	}
}

func TestLeastBytes(t *testing.T) {
	lb := &LeastBytes{}
	msg := func(n int) Message { return Message{Key: []byte("k"), Value: make([]byte, n-1)} }

	steps := []struct {
		size       int
		partitions []int
		want       int
	}{
		{10, []int{0, 1, 2}, 0}, // all zero: lowest partition
		{5, []int{0, 1, 2}, 1},
		{5, []int{0, 1, 2}, 2},
		{3, []int{0, 1, 2}, 1}, // 10, 5, 5 -> first of the ties
		{1, []int{2, 0, 1}, 2}, // same set, other order: counts kept (10, 8, 5)
		{7, []int{0, 1, 2}, 2}, // 10, 8, 6
		{1, []int{0, 1, 2}, 1}, // 10, 8, 13
		{1, []int{0, 1, 3}, 0}, // set changed: counts restart
		{1, []int{0, 1, 3}, 1},
		{1, []int{0, 1, 3}, 3},
		{1, []int{0, 1}, 0},    // shrunk: restart
		{1, []int{3, 1, 0}, 0}, // grown, unsorted: restart, lowest id first
		{1, []int{3, 1, 0}, 1},
		{1, []int{3, 1, 0}, 3},
	}
	for i, s := range steps {
		if got := lb.Balance(msg(s.size), s.partitions...); got != s.want {
			t.Fatalf("step %d: got partition %d, want %d", i, got, s.want)
		}
	}
}

func TestLeastBytesConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 8, 500
	partitions := partitionRange(4)
	lb := &LeastBytes{}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				lb.Balance(Message{Value: []byte("0123456789")}, partitions...)
			}
		}()
	}
	wg.Wait()

	// Equal-sized messages: least-bytes degenerates to a perfect spread.
	for _, c := range lb.counters {
		if want := uint64(10 * goroutines * perGoroutine / len(partitions)); c.bytes != want {
			t.Errorf("partition %d received %d bytes, want %d", c.partition, c.bytes, want)
		}
	}
}

// The FNV-1a values are from the FNV reference test suite ("" and "foobar")
// and were recomputed independently in Python; the partitions follow Sarama's
// rule abs(int32(h) % n), which segmentio/kafka-go also uses.
func TestHashFNV1a(t *testing.T) {
	tests := []struct {
		key  string
		sum  uint32
		want map[int]int // partition count -> partition
	}{
		{"", 0x811c9dc5, map[int]int{3: 0, 6: 3, 10: 5, 12: 3, 100: 35}},
		{"foobar", 0xbf9cf968, map[int]int{3: 0, 6: 0, 10: 6, 12: 0, 100: 76}},
		{"hello", 0x4f9f2cab, map[int]int{3: 0, 6: 3, 10: 3, 12: 3, 100: 23}},
		{"kafka", 0x0d33c4e1, map[int]int{3: 2, 6: 5, 10: 5, 12: 5, 100: 45}},
		{"21", 0x8cf297ec, map[int]int{3: 0, 6: 0, 10: 2, 12: 0, 100: 52}},
	}
	for _, tt := range tests {
		if got := hashKey(nil, nil, []byte(tt.key)); got != tt.sum {
			t.Errorf("fnv1a(%q) = %#x, want %#x", tt.key, got, tt.sum)
		}
		h := &Hash{}
		for n, want := range tt.want {
			if got := h.Balance(Message{Key: []byte(tt.key)}, partitionRange(n)...); got != want {
				t.Errorf("Hash: key %q over %d partitions: got %d, want %d", tt.key, n, got, want)
			}
		}
	}
}

func TestHash(t *testing.T) {
	t.Run("nil key is round-robin", func(t *testing.T) {
		h := &Hash{}
		for i, want := range []int{0, 1, 2, 0, 1} {
			if got := h.Balance(Message{}, 0, 1, 2); got != want {
				t.Fatalf("message %d: got %d, want %d", i, got, want)
			}
		}
	})

	t.Run("empty key is hashed", func(t *testing.T) {
		h := &Hash{}
		for i := 0; i < 5; i++ {
			if got := h.Balance(Message{Key: []byte{}}, partitionRange(6)...); got != 3 {
				t.Fatalf("got %d, want 3", got)
			}
		}
	})

	t.Run("returns a member of the partition set", func(t *testing.T) {
		h := &Hash{}
		// "kafka" over 3 partitions is index 2.
		if got := h.Balance(Message{Key: []byte("kafka")}, 10, 20, 30); got != 30 {
			t.Fatalf("got %d, want 30", got)
		}
	})

	t.Run("custom hasher", func(t *testing.T) {
		// crc32("hello") = 0x3610a686 is positive: plain modulo.
		h := &Hash{Hasher: crc32.NewIEEE()}
		for n, want := range map[int]int{3: 1, 6: 4, 10: 0, 12: 10} {
			if got := h.Balance(Message{Key: []byte("hello")}, partitionRange(n)...); got != want {
				t.Errorf("%d partitions: got %d, want %d", n, got, want)
			}
		}
		// crc32("foobar") = 0x9ef61f95 is negative as int32 (-1628037227).
		for n, want := range map[int]int{3: 2, 6: 5, 10: 7, 12: 11} {
			if got := h.Balance(Message{Key: []byte("foobar")}, partitionRange(n)...); got != want {
				t.Errorf("%d partitions: got %d, want %d", n, got, want)
			}
		}
	})
}

func TestReferenceHash(t *testing.T) {
	// Same FNV-1a sums as TestHashFNV1a; (int32(h) & 0x7fffffff) % n.
	tests := []struct {
		key  string
		want map[int]int
	}{
		{"", map[int]int{3: 2, 6: 5, 10: 3, 12: 5, 100: 13}},
		{"foobar", map[int]int{3: 2, 6: 2, 10: 2, 12: 8, 100: 72}},
		{"hello", map[int]int{3: 0, 6: 3, 10: 3, 12: 3, 100: 23}},
		{"21", map[int]int{3: 2, 6: 2, 10: 6, 12: 8, 100: 96}},
	}
	h := &ReferenceHash{}
	for _, tt := range tests {
		for n, want := range tt.want {
			if got := h.Balance(Message{Key: []byte(tt.key)}, partitionRange(n)...); got != want {
				t.Errorf("key %q over %d partitions: got %d, want %d", tt.key, n, got, want)
			}
		}
	}

	h = &ReferenceHash{rr: randomBalancer{mock: -1}}
	if got := h.Balance(Message{}, 0, 1, 2); got != -1 {
		t.Errorf("nil key: got %d, want the random path", got)
	}
	if got := h.Balance(Message{Key: []byte{}}, partitionRange(6)...); got != 5 {
		t.Errorf("empty key: got %d, want 5", got)
	}
}

func TestHashCustomHasherConcurrent(t *testing.T) {
	for _, b := range []Balancer{&Hash{Hasher: crc32.NewIEEE()}, &ReferenceHash{Hasher: crc32.NewIEEE()}} {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					if got := b.Balance(Message{Key: []byte("hello")}, partitionRange(10)...); got != 0 {
						t.Errorf("%T: got %d, want 0", b, got)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}

// CRC-32 (IEEE) sums: 0xcbf43926 is the standard check value of "123456789";
// the others were computed with Python's zlib.crc32. librdkafka's consistent
// partitioners take the sum modulo the partition count.
func TestCRC32Balancer(t *testing.T) {
	tests := []struct {
		key  string
		want map[int]int
	}{
		{"123456789", map[int]int{3: 2, 6: 2, 10: 2, 12: 2, 100: 62}}, // 0xcbf43926
		{"hello", map[int]int{3: 1, 6: 4, 10: 0, 12: 10, 100: 70}},    // 0x3610a686
		{"foobar", map[int]int{3: 2, 6: 5, 10: 9, 12: 5, 100: 69}},    // 0x9ef61f95
		{"user-42", map[int]int{3: 1, 6: 1, 10: 5, 12: 7, 100: 35}},   // 0x7d06b873
	}
	for _, consistent := range []bool{false, true} {
		b := CRC32Balancer{Consistent: consistent}
		for _, tt := range tests {
			for n, want := range tt.want {
				if got := b.Balance(Message{Key: []byte(tt.key)}, partitionRange(n)...); got != want {
					t.Errorf("consistent=%v key %q over %d partitions: got %d, want %d", consistent, tt.key, n, got, want)
				}
			}
		}
	}

	// Index into the given set, not a raw partition number.
	if got := (CRC32Balancer{}).Balance(Message{Key: []byte("hello")}, 10, 11, 12); got != 11 {
		t.Errorf("got %d, want 11", got)
	}

	random := CRC32Balancer{random: randomBalancer{mock: -1}}
	for _, key := range [][]byte{nil, {}} {
		if got := random.Balance(Message{Key: key}, partitionRange(6)...); got != -1 {
			t.Errorf("key %#v: got %d, want the random path", key, got)
		}
	}
	consistent := CRC32Balancer{Consistent: true, random: randomBalancer{mock: -1}}
	for _, key := range [][]byte{nil, {}} {
		// crc32 of no bytes is 0.
		if got := consistent.Balance(Message{Key: key}, 4, 5, 6); got != 4 {
			t.Errorf("consistent, key %#v: got %d, want 4", key, got)
		}
	}
}

// murmur2 sums as signed Java ints. The first six are the vectors of Kafka's
// UtilsTest.testMurmur2; all, and the partitions in TestMurmur2Balancer, were
// also checked against a throwaway Java 17 port of Utils.murmur2 and of the
// default partitioner's toPositive(murmur2(key)) % numPartitions.
var murmur2Vectors = []struct {
	key []byte
	sum int32
}{
	{[]byte("21"), -973932308},
	{[]byte("foobar"), -790332482},
	{[]byte("a-little-bit-long-string"), -985981536},
	{[]byte("a-little-bit-longer-string"), -1486304829},
	{[]byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
	{[]byte("abc"), 479470107},
	{[]byte(""), 275646681},
	{[]byte("hello"), 2132663229},
	{[]byte("kafka"), -798503068},
	{[]byte("user-42"), 1459644460},
	{[]byte{0xff, 0x80, 0x00, 0xfe, 0x7f}, -1362474117}, // bytes >= 0x80 are unsigned
}

func TestMurmur2(t *testing.T) {
	for _, v := range murmur2Vectors {
		if got := int32(murmur2(v.key)); got != v.sum {
			t.Errorf("murmur2(%q) = %d, want %d", v.key, got, v.sum)
		}
	}
}

func TestMurmur2Balancer(t *testing.T) {
	tests := []struct {
		key  string
		want map[int]int
	}{
		{"", map[int]int{3: 0, 6: 3, 10: 1, 12: 9, 100: 81}},
		{"21", map[int]int{3: 0, 6: 0, 10: 0, 12: 0, 100: 40}},
		{"abc", map[int]int{3: 0, 6: 3, 10: 7, 12: 3, 100: 7}},
		{"hello", map[int]int{3: 0, 6: 3, 10: 9, 12: 9, 100: 29}},
		{"foobar", map[int]int{3: 0, 6: 0, 10: 6, 12: 6, 100: 66}},
		{"kafka", map[int]int{3: 1, 6: 4, 10: 0, 12: 4, 100: 80}},
		{"user-42", map[int]int{3: 1, 6: 4, 10: 0, 12: 4, 100: 60}},
		{"a-little-bit-long-string", map[int]int{3: 2, 6: 2, 10: 2, 12: 8, 100: 12}},
		{"a-little-bit-longer-string", map[int]int{3: 2, 6: 5, 10: 9, 12: 11, 100: 19}},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", map[int]int{3: 2, 6: 5, 10: 7, 12: 5, 100: 77}},
	}
	for _, consistent := range []bool{false, true} {
		b := Murmur2Balancer{Consistent: consistent}
		for _, tt := range tests {
			for n, want := range tt.want {
				// Empty non-nil keys are real keys in both modes.
				if got := b.Balance(Message{Key: []byte(tt.key)}, partitionRange(n)...); got != want {
					t.Errorf("consistent=%v key %q over %d partitions: got %d, want %d", consistent, tt.key, n, got, want)
				}
			}
		}
	}

	if got := (Murmur2Balancer{}).Balance(Message{Key: []byte("kafka")}, 10, 11, 12); got != 11 {
		t.Errorf("got %d, want 11", got)
	}

	random := Murmur2Balancer{random: randomBalancer{mock: -1}}
	if got := random.Balance(Message{}, partitionRange(6)...); got != -1 {
		t.Errorf("nil key: got %d, want the random path", got)
	}
	consistent := Murmur2Balancer{Consistent: true, random: randomBalancer{mock: -1}}
	if got := consistent.Balance(Message{}, partitionRange(6)...); got != 3 {
		t.Errorf("consistent, nil key: got %d, want 3 (hashed as empty)", got)
	}
}

func TestRandomBalancer(t *testing.T) {
	partitions := []int{3, 5, 8}
	seen := map[int]int{}
	var b randomBalancer
	for i := 0; i < 3000; i++ {
		seen[b.Balance(Message{}, partitions...)]++
	}
	for p, c := range seen {
		if p != 3 && p != 5 && p != 8 {
			t.Fatalf("returned %d, not in the set", p)
		}
		if c < 700 {
			t.Errorf("partition %d chosen %d times out of 3000", p, c)
		}
	}
	if len(seen) != 3 {
		t.Errorf("only %d partitions chosen", len(seen))
	}
}

var _ = []Balancer{
	BalancerFunc(nil), &RoundRobin{}, &LeastBytes{}, &Hash{}, &ReferenceHash{},
	CRC32Balancer{}, Murmur2Balancer{}, &CRC32Balancer{}, &Murmur2Balancer{},
}
