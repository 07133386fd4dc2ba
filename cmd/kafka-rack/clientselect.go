package main

import kafka "github.com/rackfetch/kafka-go"

// clientSelectReplica is the client-side choice a Reader makes when the
// leader names no replica (a kafka.ReplicaSelector's SelectReplica, being
// added to the library as ReaderConfig.ReplicaSelector): an in-sync replica
// in the client's rack, the leader when it is in the rack, else the
// in-rack in-sync replica with the lowest id. ok is false when the rack has
// none. Once the library ships its selector, this should call it.
func clientSelectReplica(clientRack string, p kafka.Partition) (brokerID int, ok bool) {
	if clientRack == "" {
		return -1, false
	}
	if _, in := inSync(p, p.Leader.ID); in && p.Leader.Rack == clientRack {
		return p.Leader.ID, true
	}
	ids, ok := inRackISR(p, clientRack)
	if !ok {
		return -1, false
	}
	return ids[0], true
}
