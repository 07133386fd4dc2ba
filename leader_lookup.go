package kafka

import "fmt"

// partitionLeader returns the broker leading p with its address: the one
// the metadata gave with the partition, else the one known holds (the
// cluster's broker list, when the caller keeps one). Metadata can name a
// leader that is not among the brokers it lists (a broker that went away
// between the two parts of the answer); the error then names the topic,
// the partition and the broker, and wraps LeaderNotAvailable, as metadata
// read again usually names a leader that can be reached.
func partitionLeader(p Partition, known func(id int) (Broker, bool)) (Broker, error) {
	if p.Leader.Host != "" {
		return p.Leader, nil
	}
	if p.Leader.ID < 0 {
		return Broker{}, fmt.Errorf("looking up the leader of %s/%d: %w", p.Topic, p.ID, LeaderNotAvailable)
	}
	if known != nil {
		if b, ok := known(p.Leader.ID); ok && b.Host != "" {
			return b, nil
		}
	}
	return Broker{}, fmt.Errorf("looking up the leader of %s/%d: broker %d is not among the brokers the metadata lists: %w",
		p.Topic, p.ID, p.Leader.ID, LeaderNotAvailable)
}
