package consumer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rack check's detector, event by event: what it finds, once, and what
// it must not take for a cause.

var rcT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rcBroker is broker id in rack.
func rcBroker(id int, rack string) Replica { return Replica{ID: id, Rack: rack} }

// rcPart is a partition as the tests write it.
type rcPart struct {
	ID       int
	Leader   Replica
	Replicas []int
	Isr      []Replica
}

// rcPartition is led by leader, replicated on 1 (rack a), 2 (b), 3 (c),
// with isr in sync.
func rcPartition(leader Replica, isr ...Replica) rcPart {
	return rcPart{Leader: leader, Replicas: []int{1, 2, 3}, Isr: isr}
}

var (
	rcAllInSync = rcPartition(rcBroker(1, "a"), rcBroker(1, "a"), rcBroker(2, "b"), rcBroker(3, "c"))
	rcRacks     = map[int]string{1: "a", 2: "b", 3: "c"}
)

// rcAnswer is a fetch answer of the partition.
type rcAnswer struct {
	Now       time.Time
	Broker    int
	Rack      string
	Partition rcPart
	RackSent  bool
	Preferred int
	MetaAt    time.Time
}

func (a rcAnswer) answer() RackAnswer {
	return RackAnswer{Now: a.Now, Broker: a.Broker, Rack: a.Rack, Topic: "t", Partition: a.Partition.ID,
		Leader: a.Partition.Leader, ISR: a.Partition.Isr, RackSent: a.RackSent, Preferred: a.Preferred, MetaAt: a.MetaAt}
}

// rcEvent is one event fed to the detector.
type rcEvent func(d *RackDetector) *Finding

// rcAnswers feeds n answers of broker at every's interval from the
// (at)th second.
func rcAnswers(n int, at, every time.Duration, a rcAnswer) rcEvent {
	return func(d *RackDetector) *Finding {
		var found *Finding
		fresh := a.MetaAt.IsZero()
		for i := 0; i < n; i++ {
			a.Now = rcT0.Add(at + time.Duration(i)*every)
			if fresh {
				a.MetaAt = a.Now // metadata read at every answer
			}
			if f, _ := d.Answered(a.answer()); f != nil {
				found = f
			}
		}
		return found
	}
}

func rcVersions(broker int, max int16) rcEvent {
	return func(d *RackDetector) *Finding { return d.Versions(rcT0, broker, max) }
}

func rcBrokers(racks map[int]string, replicas ...int) rcEvent {
	return func(d *RackDetector) *Finding { return d.Brokers(rcT0, racks, replicas) }
}

func TestRackDetector(t *testing.T) {
	leaderNone := rcAnswer{Broker: 1, Partition: rcAllInSync, RackSent: true, Preferred: -1}
	leaderNames := leaderNone
	leaderNames.Preferred = 2
	outOfISR := leaderNone
	outOfISR.Partition = rcPartition(rcBroker(1, "a"), rcBroker(1, "a"), rcBroker(3, "c"))
	inRackLeader := leaderNone
	inRackLeader.Broker = 2
	inRackLeader.Partition = rcPartition(rcBroker(2, "b"), rcBroker(1, "a"), rcBroker(2, "b"))
	noRack := leaderNone
	noRack.RackSent = false
	follower := leaderNone
	follower.Broker = 2
	inRackFollower := follower
	inRackFollower.Rack = "b"
	otherPartition := leaderNone
	otherPartition.Partition.ID = 1

	for _, tc := range []struct {
		name   string
		rack   string
		events []rcEvent
		want   []string // found, in order, each once
		detail string   // in the detail of the last found
	}{
		{name: "recent brokers", rack: "b", events: []rcEvent{rcVersions(1, 16), rcVersions(2, 11)}},
		{name: "a broker below Fetch v11", rack: "b",
			events: []rcEvent{rcVersions(1, 16), rcVersions(2, 10), rcVersions(3, 4)},
			want:   []string{CauseFetchTooOld}, detail: "broker 2 supports Fetch up to v10"},
		{name: "old leader: its -1 says nothing of a selector", rack: "b",
			events: []rcEvent{rcVersions(1, 10), rcAnswers(20, 0, time.Second, leaderNone)},
			want:   []string{CauseFetchTooOld}},

		{name: "a broker in the rack", rack: "b", events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...)}},
		{name: "rack matching no broker", rack: "us-east-1a",
			events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...), rcBrokers(rcRacks, rcAllInSync.Replicas...)},
			want:   []string{CauseNoBrokerInRack}, detail: `no broker is in rack "us-east-1a"; the brokers' racks are "a", "b", "c"`},
		{name: "a replica's broker unknown (down): it may be in the rack", rack: "x",
			events: []rcEvent{rcBrokers(map[int]string{1: "a", 3: "c"}, rcAllInSync.Replicas...)}},
		{name: "a broker once seen in the rack stays a reason to look no further", rack: "b",
			events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...), rcBrokers(map[int]string{1: "a", 3: "c"})}},
		{name: "AZ name against AZ IDs", rack: "us-east-1a",
			events: []rcEvent{rcBrokers(map[int]string{1: "use1-az1", 2: "use1-az2"})},
			want:   []string{CauseNoBrokerInRack}, detail: "set the rack to the AZ ID"},
		{name: "case", rack: "B", events: []rcEvent{rcBrokers(rcRacks)},
			want: []string{CauseNoBrokerInRack}, detail: `"b" differs only in case`},
		{name: "brokers without racks", rack: "b", events: []rcEvent{rcBrokers(map[int]string{1: "", 2: ""})},
			want: []string{CauseNoBrokerInRack}, detail: "the brokers set no broker.rack"},

		{name: "leader silent, in-rack replica in sync", rack: "b",
			events: []rcEvent{rcAnswers(RackSilentAnswers+3, 0, 3*time.Second, leaderNone)},
			want:   []string{CauseNoReplicaSelector}, detail: "leader broker 1 (rack a) named no preferred replica in 5 answers over 12s to fetches carrying rack \"b\", although in-sync replica 2"},
		{name: "too few answers", rack: "b",
			events: []rcEvent{rcAnswers(RackSilentAnswers-1, 0, time.Minute, leaderNone)}},
		{name: "too short a window", rack: "b",
			events: []rcEvent{rcAnswers(100, 0, RackSilentWindow/200, leaderNone)}},
		{name: "the leader named a replica once", rack: "b",
			events: []rcEvent{rcAnswers(1, 0, 0, leaderNames), rcAnswers(20, time.Second, time.Second, leaderNone)}},
		{name: "in-rack replica out of the ISR", rack: "b",
			events: []rcEvent{rcAnswers(20, 0, time.Second, outOfISR)}},
		{name: "leader in the client's rack", rack: "b",
			events: []rcEvent{rcAnswers(20, 0, time.Second, inRackLeader)}},
		{name: "fetches without the rack", rack: "b",
			events: []rcEvent{rcAnswers(20, 0, time.Second, noRack)}},
		{name: "a follower's -1", rack: "b",
			events: []rcEvent{rcAnswers(20, 0, time.Second, follower)}},
		{name: "a partition read in the rack (the client chose the replica)", rack: "b",
			events: []rcEvent{rcAnswers(1, 0, 0, inRackFollower), rcAnswers(20, time.Second, time.Second, leaderNone)}},
		{name: "another partition read in the rack says nothing of this one", rack: "b",
			events: []rcEvent{rcAnswers(1, 0, 0, inRackFollower), rcAnswers(20, time.Second, time.Second, otherPartition)},
			want:   []string{CauseNoReplicaSelector}},
		{name: "answers out of ISR then in sync count from the first in sync", rack: "b",
			events: []rcEvent{rcAnswers(10, 0, time.Second, outOfISR), rcAnswers(RackSilentAnswers, 10*time.Second, time.Second, leaderNone)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewRackDetector(tc.rack)
			var got []string
			var last *Finding
			for _, ev := range tc.events {
				if f := ev(d); f != nil {
					got = append(got, f.Cause)
					last = f
				}
			}
			require.Equal(t, tc.want, got)
			if tc.detail != "" {
				require.NotNil(t, last)
				assert.Contains(t, last.Detail, tc.detail)
				assert.False(t, last.Since.Before(rcT0))
			}
			assert.Len(t, d.found, len(tc.want))
		})
	}
}

// A leader's silence is judged on metadata read after it began: until
// then the detector asks for a refresh (the ISR may have shrunk).
func TestRackDetectorConfirmsWithFreshMetadata(t *testing.T) {
	d := NewRackDetector("b")
	a := rcAnswer{Broker: 1, Partition: rcAllInSync, RackSent: true, Preferred: -1, MetaAt: rcT0.Add(-time.Second)}
	for i := 0; i < 20; i++ {
		a.Now = rcT0.Add(time.Duration(i) * time.Second)
		found, refresh := d.Answered(a.answer())
		require.Nil(t, found, "answer %d", i)
		require.Equal(t, i >= 10, refresh, "answer %d", i)
	}
	a.MetaAt = rcT0.Add(19 * time.Second)
	a.Partition = rcPartition(rcBroker(1, "a"), rcBroker(1, "a"), rcBroker(3, "c"))
	found, refresh := d.Answered(a.answer())
	assert.Nil(t, found, "the fresh ISR has no replica in the rack")
	assert.False(t, refresh)

	// Back in sync: the silence counts again from here.
	a.Partition = rcAllInSync
	for i := 20; ; i++ {
		a.Now = rcT0.Add(time.Duration(i) * time.Second)
		a.MetaAt = a.Now
		found, refresh = d.Answered(a.answer())
		assert.False(t, refresh)
		if found != nil || i == 40 {
			require.NotNil(t, found)
			assert.Equal(t, 30, i, "found 10 s after the ISR had the replica again")
			break
		}
	}
	assert.Equal(t, CauseNoReplicaSelector, found.Cause)
}
