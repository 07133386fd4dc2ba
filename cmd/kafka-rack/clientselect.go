package main

import kafka "github.com/rackfetch/kafka-go"

// clientSelectReplica is the choice a Reader with
// ReaderConfig.ReplicaSelector = kafka.RackAffinityReplicaSelector{} makes
// when the leader names no replica. Like the Reader, it offers the selector
// only the in-sync replicas fit to read (a host, not offline). ok is false
// when the rack has none.
func clientSelectReplica(clientRack string, p kafka.Partition) (brokerID int, ok bool) {
	usable := p
	usable.Isr = nil
	for _, b := range p.Isr {
		if rb, fit := inSync(p, b.ID); fit {
			usable.Isr = append(usable.Isr, rb)
		}
	}
	id, ok := kafka.RackAffinityReplicaSelector{}.SelectReplica(clientRack, usable)
	if !ok {
		return -1, false
	}
	return id, true
}
