package kafka

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/protocol"
)

// The Conn's requests about the cluster rather than its partition: API
// versions, controller, brokers and partitions (Metadata), and creating and
// deleting topics.

// ApiVersion is the range of versions a broker supports for one API.
type ApiVersion struct {
	ApiKey     int16
	MinVersion int16
	MaxVersion int16
}

// Format prints the API for fmt as kafka-go does: %s its name, %d its key,
// %-d and %+d the lowest and highest version, %v "Name[vMin:vMax]", %-v and
// %+v "vMin" and "vMax", %#v the Go syntax.
func (v ApiVersion) Format(w fmt.State, verb rune) {
	switch verb {
	case 's':
		fmt.Fprint(w, protocol.ApiKey(v.ApiKey))
	case 'd':
		switch {
		case w.Flag('-'):
			fmt.Fprint(w, v.MinVersion)
		case w.Flag('+'):
			fmt.Fprint(w, v.MaxVersion)
		default:
			fmt.Fprint(w, v.ApiKey)
		}
	case 'v':
		switch {
		case w.Flag('-'):
			fmt.Fprintf(w, "v%d", v.MinVersion)
		case w.Flag('+'):
			fmt.Fprintf(w, "v%d", v.MaxVersion)
		case w.Flag('#'):
			fmt.Fprintf(w, "kafka.ApiVersion{ApiKey:%d MinVersion:%d MaxVersion:%d}", v.ApiKey, v.MinVersion, v.MaxVersion)
		default:
			fmt.Fprintf(w, "%s[v%d:v%d]", protocol.ApiKey(v.ApiKey), v.MinVersion, v.MaxVersion)
		}
	default:
		fmt.Fprintf(w, "%%!%c(kafka.ApiVersion=%d)", verb, v.ApiKey)
	}
}

// ApiVersions returns the versions the broker supports for each API.
func (c *Conn) ApiVersions() ([]ApiVersion, error) {
	vs, err := c.loadApiVersions(context.Background())
	if err != nil {
		return nil, err
	}
	out := make([]ApiVersion, 0, len(vs))
	for k, r := range vs {
		out = append(out, ApiVersion{ApiKey: int16(k), MinVersion: r.Min, MaxVersion: r.Max})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ApiKey < out[j].ApiKey })
	return out, nil
}

// metadata asks for the metadata of topics; nil topics means all topics.
func (c *Conn) metadata(ctx context.Context, topics []string) (*protocol.MetadataResponse, error) {
	req := &protocol.MetadataRequest{}
	if topics != nil {
		req.Topics = make([]protocol.MetadataRequestTopic, len(topics))
		for i, t := range topics {
			req.Topics[i].Name = t
		}
		if len(topics) == 0 {
			req.Topics = []protocol.MetadataRequestTopic{}
		}
	}
	resp, _, err := c.roundTrip(ctx, req, -1)
	if err != nil {
		return nil, fmt.Errorf("reading metadata from %s: %w", c.conn.RemoteAddr(), err)
	}
	return resp.(*protocol.MetadataResponse), nil
}

// Controller returns the broker that is the cluster's controller.
func (c *Conn) Controller() (Broker, error) {
	md, err := c.metadata(context.Background(), []string{})
	if err != nil {
		return Broker{}, err
	}
	for _, b := range md.Brokers {
		if b.NodeID == md.ControllerID {
			return makeBroker(b), nil
		}
	}
	return Broker{}, fmt.Errorf("reading the controller from %s: controller %d is not among the brokers", c.conn.RemoteAddr(), md.ControllerID)
}

// Brokers returns the brokers of the cluster.
func (c *Conn) Brokers() ([]Broker, error) {
	md, err := c.metadata(context.Background(), []string{})
	if err != nil {
		return nil, err
	}
	brokers := make([]Broker, len(md.Brokers))
	for i, b := range md.Brokers {
		brokers[i] = makeBroker(b)
	}
	return brokers, nil
}

// ReadPartitions returns the partitions of the given topics; with none, the
// Conn's topic, or every topic when the Conn has none.
func (c *Conn) ReadPartitions(topics ...string) ([]Partition, error) {
	return c.readPartitions(context.Background(), topics...)
}

func (c *Conn) readPartitions(ctx context.Context, topics ...string) ([]Partition, error) {
	if len(topics) == 0 {
		if c.topic != "" {
			topics = []string{c.topic}
		} else {
			topics = nil // nil asks for all topics
		}
	}
	md, err := c.metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	var partitions []Partition
	for _, t := range md.Topics {
		if t.ErrorCode != 0 {
			return nil, fmt.Errorf("reading partitions of %q: %w", t.Name, Error(t.ErrorCode))
		}
		if t.TopicID != ([16]byte{}) {
			c.topicIDs.Store(t.Name, t.TopicID) // for lookupPartition
		}
		partitions = append(partitions, makePartitions(md, &t)...)
	}
	return partitions, nil
}

func makeBroker(b protocol.MetadataResponseBroker) Broker { return Broker(metadata.MakeBroker(b)) }

// makePartitions converts one topic of a metadata response (see
// metadata.MakePartitions).
func makePartitions(md *protocol.MetadataResponse, t *protocol.MetadataResponseTopic) []Partition {
	ps := metadata.MakePartitions(md, t)
	out := make([]Partition, len(ps))
	for i, p := range ps {
		out[i] = publicPartition(p)
	}
	return out
}

// ConfigEntry is one topic configuration key and value.
type ConfigEntry struct {
	ConfigName  string
	ConfigValue string
}

// ReplicaAssignment places a partition's replicas on given brokers.
type ReplicaAssignment struct {
	Partition int
	// The list of brokers where the partition should be allocated. There
	// must be as many entries in this list as there are replicas of the
	// partition. The first entry represents the broker that will be the
	// preferred leader for the partition.
	Replicas []int
}

// TopicConfig describes a topic to create.
type TopicConfig struct {
	// Topic name
	Topic string

	// NumPartitions created. -1 indicates unset.
	NumPartitions int

	// ReplicationFactor for the topic. -1 indicates unset.
	ReplicationFactor int

	// ReplicaAssignments among kafka brokers for this topic partitions. If
	// this is set num_partitions and replication_factor must be unset.
	ReplicaAssignments []ReplicaAssignment

	// ConfigEntries holds topic level configuration for topic to be set.
	ConfigEntries []ConfigEntry
}

// CreateTopics creates one topic per configuration. Creating a topic that
// already exists is not an error.
func (c *Conn) CreateTopics(topics ...TopicConfig) error {
	req := &protocol.CreateTopicsRequest{TimeoutMs: c.requestTimeoutMs()}
	for _, t := range topics {
		rt := protocol.CreateTopicsRequestTopic{
			Name:              t.Topic,
			NumPartitions:     int32(t.NumPartitions),
			ReplicationFactor: int16(t.ReplicationFactor),
		}
		for _, a := range t.ReplicaAssignments {
			ids := make([]int32, len(a.Replicas))
			for i, r := range a.Replicas {
				ids[i] = int32(r)
			}
			rt.Assignments = append(rt.Assignments, protocol.CreateTopicsRequestAssignment{PartitionIndex: int32(a.Partition), BrokerIDs: ids})
		}
		for _, e := range t.ConfigEntries {
			v := e.ConfigValue
			rt.Configs = append(rt.Configs, protocol.CreateTopicsRequestConfig{Name: e.ConfigName, Value: &v})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, _, err := c.roundTrip(context.Background(), req, -1)
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	for _, t := range resp.(*protocol.CreateTopicsResponse).Topics {
		if t.ErrorCode != 0 && Error(t.ErrorCode) != TopicAlreadyExists {
			return fmt.Errorf("creating topic %q: %w", t.Name, makeError(t.ErrorCode, deref(t.ErrorMessage)))
		}
	}
	return nil
}

// DeleteTopics deletes the specified topics.
func (c *Conn) DeleteTopics(topics ...string) error {
	req := &protocol.DeleteTopicsRequest{TimeoutMs: c.requestTimeoutMs(), TopicNames: topics}
	for _, t := range topics {
		req.Topics = append(req.Topics, protocol.DeleteTopicsRequestTopic{Name: t})
	}
	resp, _, err := c.roundTrip(context.Background(), req, -1)
	if err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	for _, t := range resp.(*protocol.DeleteTopicsResponse).Responses {
		if t.ErrorCode != 0 {
			return fmt.Errorf("deleting topic %q: %w", t.Name, makeError(t.ErrorCode, deref(t.ErrorMessage)))
		}
	}
	return nil
}

// requestTimeoutMs is the broker-side timeout for admin requests: the time
// left before the write deadline, or 30 s without one.
func (c *Conn) requestTimeoutMs() int32 {
	d := c.wdeadline.get()
	if d.IsZero() {
		return 30000
	}
	ms := time.Until(d).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	return int32(ms)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
