package kafka

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rack check's detector, event by event: what it finds, once, and what
// it must not take for a cause.

var rcT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rcBroker is broker id in rack.
func rcBroker(id int, rack string) Broker {
	return Broker{Host: "h", Port: 9092 + id, ID: id, Rack: rack}
}

// rcPartition is led by broker 1 (rack a), replicated on 1, 2 (b), 3 (c),
// with isr in sync.
func rcPartition(leader Broker, isr ...Broker) Partition {
	return Partition{Topic: "t", Leader: leader,
		Replicas: []Broker{rcBroker(1, "a"), rcBroker(2, "b"), rcBroker(3, "c")}, Isr: isr}
}

var (
	rcAllInSync = rcPartition(rcBroker(1, "a"), rcBroker(1, "a"), rcBroker(2, "b"), rcBroker(3, "c"))
	rcRacks     = map[int]string{1: "a", 2: "b", 3: "c"}
)

// rcEvent is one event fed to the detector.
type rcEvent func(d *rackDetector) *RackInactive

// rcAnswers feeds n answers of broker at every's interval from the
// (at)th second.
func rcAnswers(n int, at, every time.Duration, a rackAnswer) rcEvent {
	return func(d *rackDetector) *RackInactive {
		var found *RackInactive
		fresh := a.MetaAt.IsZero()
		for i := 0; i < n; i++ {
			a.Now = rcT0.Add(at + time.Duration(i)*every)
			if fresh {
				a.MetaAt = a.Now // metadata read at every answer
			}
			if f, _ := d.answered(a); f != nil {
				found = f
			}
		}
		return found
	}
}

func rcVersions(broker int, max int16) rcEvent {
	return func(d *rackDetector) *RackInactive { return d.versions(rcT0, broker, max) }
}

func rcBrokers(racks map[int]string, replicas ...Broker) rcEvent {
	return func(d *rackDetector) *RackInactive { return d.brokers(rcT0, racks, replicas) }
}

func TestRackDetector(t *testing.T) {
	leaderNone := rackAnswer{Broker: 1, Partition: rcAllInSync, RackSent: true, Preferred: -1}
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
		want   []RackInactiveCause // found, in order, each once
		detail string              // in the detail of the last found
	}{
		{name: "recent brokers", rack: "b", events: []rcEvent{rcVersions(1, 16), rcVersions(2, 11)}},
		{name: "a broker below Fetch v11", rack: "b",
			events: []rcEvent{rcVersions(1, 16), rcVersions(2, 10), rcVersions(3, 4)},
			want:   []RackInactiveCause{RackFetchTooOld}, detail: "broker 2 supports Fetch up to v10"},
		{name: "old leader: its -1 says nothing of a selector", rack: "b",
			events: []rcEvent{rcVersions(1, 10), rcAnswers(20, 0, time.Second, leaderNone)},
			want:   []RackInactiveCause{RackFetchTooOld}},

		{name: "a broker in the rack", rack: "b", events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...)}},
		{name: "rack matching no broker", rack: "us-east-1a",
			events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...), rcBrokers(rcRacks, rcAllInSync.Replicas...)},
			want:   []RackInactiveCause{RackNoBrokerInRack}, detail: `no broker is in rack "us-east-1a"; the brokers' racks are "a", "b", "c"`},
		{name: "a replica's broker unknown (down): it may be in the rack", rack: "x",
			events: []rcEvent{rcBrokers(map[int]string{1: "a", 3: "c"}, rcAllInSync.Replicas...)}},
		{name: "a broker once seen in the rack stays a reason to look no further", rack: "b",
			events: []rcEvent{rcBrokers(rcRacks, rcAllInSync.Replicas...), rcBrokers(map[int]string{1: "a", 3: "c"})}},
		{name: "AZ name against AZ IDs", rack: "us-east-1a",
			events: []rcEvent{rcBrokers(map[int]string{1: "use1-az1", 2: "use1-az2"})},
			want:   []RackInactiveCause{RackNoBrokerInRack}, detail: "set the rack to the AZ ID"},
		{name: "case", rack: "B", events: []rcEvent{rcBrokers(rcRacks)},
			want: []RackInactiveCause{RackNoBrokerInRack}, detail: `"b" differs only in case`},
		{name: "brokers without racks", rack: "b", events: []rcEvent{rcBrokers(map[int]string{1: "", 2: ""})},
			want: []RackInactiveCause{RackNoBrokerInRack}, detail: "the brokers set no broker.rack"},

		{name: "leader silent, in-rack replica in sync", rack: "b",
			events: []rcEvent{rcAnswers(rackSilentAnswers+3, 0, 3*time.Second, leaderNone)},
			want:   []RackInactiveCause{RackNoReplicaSelector}, detail: "leader broker 1 (rack a) named no preferred replica in 5 answers over 12s to fetches carrying rack \"b\", although in-sync replica 2"},
		{name: "too few answers", rack: "b",
			events: []rcEvent{rcAnswers(rackSilentAnswers-1, 0, time.Minute, leaderNone)}},
		{name: "too short a window", rack: "b",
			events: []rcEvent{rcAnswers(100, 0, rackSilentWindow/200, leaderNone)}},
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
			want:   []RackInactiveCause{RackNoReplicaSelector}},
		{name: "answers out of ISR then in sync count from the first in sync", rack: "b",
			events: []rcEvent{rcAnswers(10, 0, time.Second, outOfISR), rcAnswers(rackSilentAnswers, 10*time.Second, time.Second, leaderNone)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newRackDetector(tc.rack)
			var got []RackInactiveCause
			var last *RackInactive
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
	d := newRackDetector("b")
	a := rackAnswer{Broker: 1, Partition: rcAllInSync, RackSent: true, Preferred: -1, MetaAt: rcT0.Add(-time.Second)}
	for i := 0; i < 20; i++ {
		a.Now = rcT0.Add(time.Duration(i) * time.Second)
		found, refresh := d.answered(a)
		require.Nil(t, found, "answer %d", i)
		require.Equal(t, i >= 10, refresh, "answer %d", i)
	}
	a.MetaAt = rcT0.Add(19 * time.Second)
	a.Partition = rcPartition(rcBroker(1, "a"), rcBroker(1, "a"), rcBroker(3, "c"))
	found, refresh := d.answered(a)
	assert.Nil(t, found, "the fresh ISR has no replica in the rack")
	assert.False(t, refresh)

	// Back in sync: the silence counts again from here.
	a.Partition = rcAllInSync
	for i := 20; ; i++ {
		a.Now = rcT0.Add(time.Duration(i) * time.Second)
		a.MetaAt = a.Now
		found, refresh = d.answered(a)
		assert.False(t, refresh)
		if found != nil || i == 40 {
			require.NotNil(t, found)
			assert.Equal(t, 30, i, "found 10 s after the ISR had the replica again")
			break
		}
	}
	assert.Equal(t, RackNoReplicaSelector, found.Cause)
}

func TestRackInactiveString(t *testing.T) {
	d := newRackDetector("x")
	f := d.brokers(rcT0, rcRacks, nil)
	require.NotNil(t, f)
	s := f.String()
	assert.True(t, strings.HasPrefix(s, "rack-aware fetching is inactive (no broker in the client's rack): "), s)
	assert.Nil(t, f.Brokers)
}

// The causes are metric label values like the reroute reasons: stable IDs
// of [a-z_]+, each with a sentence of its own for the logs.
func TestRackInactiveCauseIDs(t *testing.T) {
	want := map[RackInactiveCause]string{
		RackNoReplicaSelector: "no_replica_selector",
		RackNoBrokerInRack:    "no_broker_in_rack",
		RackFetchTooOld:       "fetch_too_old",
	}
	sentences := map[string]bool{}
	for c, id := range want {
		assert.Equal(t, id, string(c))
		assert.Regexp(t, `^[a-z_]+$`, string(c))
		assert.NotEqual(t, id, c.Sentence(), "cause %q has no sentence", c)
		assert.False(t, sentences[c.Sentence()], "sentence %q used twice", c.Sentence())
		sentences[c.Sentence()] = true
	}
	assert.Equal(t, "some_cause", RackInactiveCause("some_cause").Sentence())
}
