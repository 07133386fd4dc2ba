package routing

// Replica is a broker as partition metadata lists it. A broker the
// metadata does not know has only its ID. Its fields are kafka.Broker's,
// so the kafka package converts one with a type conversion.
type Replica struct {
	Host string
	Port int
	ID   int
	Rack string
}

// Partition is the routing view of one partition's metadata.
type Partition struct {
	Topic string
	ID    int

	Leader          Replica
	LeaderEpoch     int // -1: unknown
	Replicas        []Replica
	Isr             []Replica
	OfflineReplicas []Replica
}

// topicPartition keys a partition's cooldowns and waits.
type topicPartition struct {
	topic     string
	partition int
}

// InSync reports whether broker b is a replica of p fit to read from: in
// the ISR, with a host, and not offline.
func InSync(p *Partition, b int) bool {
	inISR, known := false, false
	for _, r := range p.Isr {
		if r.ID == b {
			inISR = true
			known = known || r.Host != ""
		}
	}
	if !inISR {
		return false
	}
	for _, r := range p.Replicas {
		if r.ID == b && r.Host != "" {
			known = true
		}
	}
	for _, r := range p.OfflineReplicas {
		if r.ID == b {
			return false
		}
	}
	return known
}
