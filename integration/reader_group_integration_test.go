package integration

// Acceptance tests of the Reader's group mode on the real 3-rack cluster: three members sharing six
// partitions while a producer writes, a member leaving without committing, a member crashing, the takeover
// time, and a new member resuming at the committed offsets; ReadMessage's synchronous and periodic commits.
// Helpers (prefix rgi) are in helpers_group*_test.go.

import (
	"fmt"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
)

// Three readers of one group share six partitions while a producer
// writes. While the members are stable every message is returned exactly
// once, in partition order. A member that closes without committing what
// it fetched last loses nothing: a survivor returns those messages again,
// soon. A member that crashes (no LeaveGroup, connections cut) is replaced
// within the session timeout. A new member of the group resumes exactly at
// the committed offsets.
func TestReaderGroupIntegrationMembers(t *testing.T) {
	c := requireRackCluster(t)
	const parts = 6
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
	group := "g-" + topic
	rec := &rgiRecorder{}

	m := []*rgiMember{
		rgiStart(t, c, rec, "m0", group, topic, nil),
		rgiStart(t, c, rec, "m1", group, topic, func(cfg *kafka.ReaderConfig) { cfg.Topic, cfg.GroupTopics = topic, nil }),
		rgiStart(t, c, rec, "m2", group, topic, nil),
	}
	gen0, owned0 := rgiWaitStable(t, 30*time.Second, topic, parts, m[0].r, m[1].r, m[2].r)
	t.Logf("stable generation %d: %v", gen0, owned0)
	for i, ps := range owned0 {
		if len(ps) != 2 {
			t.Fatalf("member %d has partitions %v, want two of six", i, ps)
		}
	}

	prod := newRgiProducer(t, c, topic)
	prod.background(parts, 1, 50*time.Millisecond)
	eventually(t, 30*time.Second, "every member reading", func() bool {
		return rec.count("m0") >= 60 && rec.count("m1") >= 60 && rec.count("m2") >= 60
	})

	// m0 stops committing, fetches some more, and closes.
	m[0].noCommit.Store(true)
	mark := rec.count("m0")
	eventually(t, 30*time.Second, "m0 fetching without committing", func() bool { return rec.count("m0") >= mark+20 })
	m[0].halt()
	tClose := time.Now()
	stable := rec.snapshot()
	for i := 1; i < 3; i++ {
		if g, _ := rgiAssignment(m[i].r, topic); g != gen0 {
			t.Fatalf("m%d left generation %d for %d while the members were stable", i, gen0, g)
		}
	}
	m[0].r.Close()
	t.Logf("m0 closed in %v", time.Since(tClose))

	// Exactly once while stable.
	seen := map[[2]int64]string{}
	var uncommitted []rgiDelivery
	for _, d := range stable {
		k := [2]int64{int64(d.part), d.offset}
		if other, dup := seen[k]; dup {
			t.Errorf("while stable: partition %d offset %d returned by %s and %s", d.part, d.offset, other, d.member)
		}
		seen[k] = d.member
		if d.gen != gen0 {
			t.Errorf("while stable: %s returned partition %d offset %d in generation %d", d.member, d.part, d.offset, d.gen)
		}
		if d.member == "m0" && d.state == rgiNotCommitted {
			uncommitted = append(uncommitted, d)
		}
	}
	if len(uncommitted) < 20 {
		t.Fatalf("m0 returned %d messages it did not commit, want >= 20", len(uncommitted))
	}

	// The survivors take m0's partitions over: every partition of m0 is
	// read by a survivor again, starting with what m0 did not commit.
	// takeover measures, from from, when the survivors' generation owns
	// the lost partitions and when each of them was read by a survivor.
	takeover := func(from time.Time, lost []int, survivors ...*rgiMember) (assigned, read time.Duration) {
		t.Helper()
		assigned, read = -1, -1
		eventually(t, rgiSession+rgiMargin+rgiReadMargin+10*time.Second, fmt.Sprintf("partitions %v taken over", lost), func() bool {
			if assigned < 0 {
				owned := map[int]bool{}
				for _, s := range survivors {
					_, ps := rgiAssignment(s.r, topic)
					for _, p := range ps {
						owned[p] = true
					}
				}
				all := true
				for _, p := range lost {
					all = all && owned[p]
				}
				if all {
					assigned = time.Since(from)
				}
			}
			first := map[int]time.Duration{}
			for _, d := range rec.snapshot() {
				if d.at.Before(from) {
					continue
				}
				for _, s := range survivors {
					if _, ok := first[d.part]; !ok && d.member == s.name {
						first[d.part] = d.at.Sub(from)
					}
				}
			}
			read = 0
			for _, p := range lost {
				f, ok := first[p]
				if !ok {
					return false
				}
				read = max(read, f)
			}
			return assigned >= 0
		})
		return assigned, read
	}
	check := func(what string, assigned, read time.Duration) {
		t.Helper()
		if assigned > rgiSession+rgiMargin {
			t.Errorf("%s: the survivors owned the partitions after %v, want <= %v", what, assigned, rgiSession+rgiMargin)
		}
		if read > rgiSession+rgiMargin+rgiReadMargin {
			t.Errorf("%s: the survivors read every partition after %v, want <= %v", what, read, rgiSession+rgiMargin+rgiReadMargin)
		}
	}
	closeAssigned, closeRead := takeover(tClose, owned0[0], m[1], m[2])
	gen1, owned1 := rgiWaitStable(t, 30*time.Second, topic, parts, m[1].r, m[2].r)
	t.Logf("TAKEOVER after m0 closed: generation %d %v; m0's partitions %v owned by survivors after %v, all read after %v",
		gen1, owned1, owned0[0], closeAssigned, closeRead)
	check("m0 closed", closeAssigned, closeRead)
	for _, u := range uncommitted {
		u := u
		eventually(t, 30*time.Second, fmt.Sprintf("m0's uncommitted partition %d offset %d returned by a survivor", u.part, u.offset), func() bool {
			for _, d := range rec.snapshot() {
				if d.part == u.part && d.offset == u.offset && d.member != "m0" && d.state == rgiCommitOK {
					return true
				}
			}
			return false
		})
	}

	// m1 crashes: no LeaveGroup, no commit, its connections cut. m2 takes
	// its partitions over once the coordinator expired m1's session.
	m[1].spy.crash()
	tCrash := time.Now()
	// Not waited for: a commit m1 has in flight keeps retrying, against a
	// coordinator it cannot reach, until its session is over.
	go m[1].halt()
	crashAssigned, crashRead := takeover(tCrash, owned1[0], m[2])
	t.Logf("TAKEOVER after m1 crashed: its partitions %v owned by m2 after %v, all read after %v (session timeout %v)",
		owned1[0], crashAssigned, crashRead, rgiSession)
	check("m1 crashed", crashAssigned, crashRead)
	if g, ps := rgiAssignment(m[2].r, topic); len(ps) != parts {
		t.Errorf("m2 in generation %d has %v, want all %d partitions", g, ps, parts)
	}

	// Everything produced is returned.
	prod.stopBackground()
	ends := rgiEnds(t, c, topic, parts)
	rgiWaitCovered(t, rec, ends)
	m[2].halt()
	all := rec.snapshot()
	rgiCheckDeliveries(t, all)
	for i := range m {
		if n := m[i].errs.Load(); n != 0 {
			t.Logf("m%d: FetchMessage returned %d errors", i, n)
		}
	}
	var total int64
	for _, e := range ends {
		total += e
	}
	t.Logf("%d messages produced, %d returned", total, len(all))
	m[1].r.Close()
	m[2].r.Close()

	// The group committed exactly what it read; a new member starts there.
	committed := rgiCommitted(t, c, group, topic, parts)
	for p, end := range ends {
		if committed[p] != end {
			t.Errorf("partition %d: committed %d, end %d", p, committed[p], end)
		}
	}
	prod.produce(parts, 5)
	rec2 := &rgiRecorder{}
	m3 := rgiStart(t, c, rec2, "m3", group, topic, nil)
	eventually(t, 30*time.Second, "m3 reading every partition", func() bool {
		got := map[int]bool{}
		for _, d := range rec2.snapshot() {
			got[d.part] = true
		}
		return len(got) == parts
	})
	m3.halt()
	first := map[int]int64{}
	for _, d := range rec2.snapshot() {
		if _, ok := first[d.part]; !ok {
			first[d.part] = d.offset
		}
	}
	for p := 0; p < parts; p++ {
		if first[p] != committed[p] {
			t.Errorf("the new member started partition %d at offset %d, committed %d", p, first[p], committed[p])
		}
	}
}

// ReadMessage commits what it returns: at once by default (the offset is
// committed when ReadMessage returns), every CommitInterval otherwise (a
// handful of commits for many messages, caught up within an interval, and
// flushed by Close). Either way the committed offset is exactly one past
// the last message returned, never beyond.
func TestReaderGroupIntegrationReadMessageCommits(t *testing.T) {
	c := requireRackCluster(t)
	const parts, n = 2, 100
	for _, interval := range []time.Duration{0, 500 * time.Millisecond} {
		t.Run(fmt.Sprintf("CommitInterval=%v", interval), func(t *testing.T) {
			topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
			group := "g-" + topic
			prod := newRgiProducer(t, c, topic)
			prod.produce(parts, n)
			spy := &apiSpy{}
			r := rgiReader(t, c, "r", group, topic, spy, func(cfg *kafka.ReaderConfig) { cfg.CommitInterval = interval })
			ctx := testContext(t, 60*time.Second)

			next := map[int]int64{}
			read := func(count int) {
				t.Helper()
				for i := 0; i < count; i++ {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						t.Fatalf("ReadMessage: %v", err)
					}
					if want := next[m.Partition]; m.Offset != want {
						t.Fatalf("partition %d: offset %d, want %d", m.Partition, m.Offset, want)
					}
					next[m.Partition] = m.Offset + 1
					if interval == 0 && i%25 == 0 {
						// Synchronous: committed before ReadMessage returned.
						if got := rgiCommitted(t, c, group, topic, parts)[m.Partition]; got != m.Offset+1 {
							t.Fatalf("partition %d: committed %d right after ReadMessage returned offset %d", m.Partition, got, m.Offset)
						}
					}
				}
			}
			// waitCommitted polls until the committed offsets reach next,
			// then requires them to be exactly next.
			waitCommitted := func(within time.Duration) time.Duration {
				t.Helper()
				start := time.Now()
				var got map[int]int64
				eventually(t, within, "the commits catching up", func() bool {
					got = rgiCommitted(t, c, group, topic, parts)
					for p := 0; p < parts; p++ {
						if got[p] < next[p] {
							return false
						}
					}
					return true
				})
				for p := 0; p < parts; p++ {
					if got[p] != next[p] {
						t.Errorf("partition %d: committed %d, but the last message returned is %d", p, got[p], next[p]-1)
					}
				}
				return time.Since(start)
			}

			rgiWaitStable(t, 30*time.Second, topic, parts, r)
			start := time.Now()
			read(parts * n)
			readTime := time.Since(start)
			commits := spy.count(int16(protocol.OffsetCommit), start, time.Now())
			t.Logf("%d messages read in %v with %d OffsetCommit requests", parts*n, readTime, commits)
			if interval == 0 {
				if commits < parts*n {
					t.Errorf("%d OffsetCommit requests for %d messages read with synchronous commits", commits, parts*n)
				}
				waitCommitted(0)
				return
			}
			if limit := int(readTime/interval) + 2; commits > limit {
				t.Errorf("%d OffsetCommit requests in %v with CommitInterval %v, want <= %d", commits, readTime, interval, limit)
			}
			lag := waitCommitted(2*interval + 2*time.Second)
			t.Logf("commits caught up %v after the last ReadMessage", lag)
			// Nothing more is committed while nothing is read.
			before := spy.count(int16(protocol.OffsetCommit), time.Time{}, time.Now())
			eventually(t, 5*time.Second, "two more commit intervals", func() bool { return time.Since(start) > readTime+lag+2*interval })
			if after := spy.count(int16(protocol.OffsetCommit), time.Time{}, time.Now()); after != before {
				t.Errorf("%d OffsetCommit requests while nothing was read", after-before)
			}
			// Close flushes what was read since the last tick.
			prod.produce(parts, 10)
			read(parts * 10)
			r.Close()
			waitCommitted(0)
		})
	}
}
