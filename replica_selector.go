package kafka

import "github.com/rackfetch/kafka-go/internal/routing"

// Client-side replica selection: for brokers without
// replica.selector.class, whose leaders never name a preferred replica. A
// broker serves a v11+ consumer fetch from any replica it hosts whatever its
// selector, so the Reader may pick the replica itself. The broker's choice,
// when its leader names one, always wins; the client's applies only when the
// leader names none. The choice enters the routing state machine
// (internal/routing) as a lease like the leader's, under the same rules:
// in-sync replicas only, cooldowns, the flap budget, the TTL after which the
// leader is asked again, leader changes and epochs; offsets are still
// resolved at the leader only.

// ReplicaSelector picks the replica a client in clientRack should read
// partition p from. p is the partition's metadata as the Reader last saw
// it, with Isr reduced to the replicas the Reader may read now (in sync,
// reachable, not cooling down after a failure). It returns the broker ID
// and true, or false to read from the leader. A broker outside that ISR is
// never read: the Reader reads from the leader instead.
type ReplicaSelector interface {
	SelectReplica(clientRack string, p Partition) (brokerID int, ok bool)
}

// RackAffinityReplicaSelector picks an in-sync replica in the client's
// rack: the leader when it is there, else one of the rack's in-sync
// replicas, the same one for a partition every time (by partition ID, so
// that the partitions of a topic spread over a rack's brokers). It returns
// false when the client has no rack or no in-sync replica is in it.
type RackAffinityReplicaSelector struct{}

// SelectReplica satisfies the ReplicaSelector interface.
func (RackAffinityReplicaSelector) SelectReplica(clientRack string, p Partition) (int, bool) {
	return routing.RackAffinity{}.Choose(clientRack, routingPartition(p))
}

// ReplicaToRead returns the broker a Conn should dial to read partition p
// from a client in clientRack: the replica sel picks (RackAffinityReplicaSelector
// when nil) if it is in p's ISR with an address and not offline, else the
// leader. Dial it with Dialer.RackID set (a follower serves only fetches
// that carry client metadata, Fetch v11+) and position the Conn with
// SeekDontCheck at an offset resolved at the leader: followers refuse
// ListOffsets.
func ReplicaToRead(sel ReplicaSelector, clientRack string, p Partition) Broker {
	if sel == nil {
		sel = RackAffinityReplicaSelector{}
	}
	view := routingPartition(p)
	if id, ok := routeChooser(sel).Choose(clientRack, routing.Readable(view, func(int) bool { return true })); ok && routing.InSync(&view, id) {
		for _, b := range p.Replicas {
			if b.ID == id && b.Host != "" {
				return b
			}
		}
	}
	return p.Leader
}

// routeChooser adapts sel to the router (nil: no client-side choice).
// RackAffinityReplicaSelector runs on the routing view itself: no
// conversion to a kafka.Partition each time it is asked.
func routeChooser(sel ReplicaSelector) routing.Chooser {
	switch sel.(type) {
	case nil:
		return nil
	case RackAffinityReplicaSelector:
		return routing.RackAffinity{}
	}
	return selectorChooser{sel}
}

// selectorChooser asks a ReplicaSelector of the application.
type selectorChooser struct{ sel ReplicaSelector }

func (c selectorChooser) Choose(clientRack string, p routing.Partition) (int, bool) {
	return c.sel.SelectReplica(clientRack, kafkaPartition(p))
}
