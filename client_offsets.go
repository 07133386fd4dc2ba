package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// OffsetRequest asks for one offset of a partition: the first, the last, or
// the first one whose message is at or after a time.
type OffsetRequest struct {
	Partition int
	// Timestamp is FirstOffset, LastOffset, or a time in milliseconds
	// since the Unix epoch.
	Timestamp int64
}

// FirstOffsetOf asks for the first (earliest) offset of a partition.
func FirstOffsetOf(partition int) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: FirstOffset}
}

// LastOffsetOf asks for the last offset of a partition: the offset the next
// message will get (the high watermark, or the last stable offset when
// reading committed messages only).
func LastOffsetOf(partition int) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: LastOffset}
}

// TimeOffsetOf asks for the offset of the first message of a partition
// whose timestamp is at or after at. The zero time means timestamp 0.
func TimeOffsetOf(partition int, at time.Time) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: clientOffsetsMillis(at)}
}

// PartitionOffsets holds the offsets found for one partition.
type PartitionOffsets struct {
	Partition int

	// FirstOffset and LastOffset are the offsets asked for with
	// FirstOffsetOf and LastOffsetOf; -1 when they were not asked for or
	// could not be read.
	FirstOffset int64
	LastOffset  int64

	// Offsets maps each offset found for a TimeOffsetOf request to the
	// time that was asked for. A time later than every message gives
	// offset -1.
	Offsets map[int64]time.Time

	// Error is the error that kept some offset of the partition from being
	// read, if any.
	Error error
}

// ListOffsetsRequest is the input of Client.ListOffsets.
type ListOffsetsRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// Topics maps topic names to the offsets to look up in them.
	Topics map[string][]OffsetRequest

	// IsolationLevel picks which messages count for LastOffset: with
	// ReadCommitted, offsets of open transactions are excluded. The
	// default is ReadUncommitted.
	IsolationLevel IsolationLevel
}

// ListOffsetsResponse is the output of Client.ListOffsets.
type ListOffsetsResponse struct {
	// Throttle is the longest time a broker throttled its request (quotas).
	Throttle time.Duration

	// Topics maps each topic of the request to its partitions' offsets,
	// one entry per partition asked for, ordered by partition.
	Topics map[string][]PartitionOffsets
}

type clientOffsetsKey struct {
	topic     string
	partition int32
}

// ListOffsets looks up partition offsets. Each partition's lookups are sent
// to its leader, one request per leader holding every partition the leader
// leads (more than one when a partition is asked for several offsets, which
// a single request cannot carry). Errors of a partition, including a
// request that failed, are in its PartitionOffsets.Error; the method fails
// when every request failed.
func (c *Client) ListOffsets(ctx context.Context, req *ListOffsetsRequest) (*ListOffsetsResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).ListOffsets: nil request")
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ListOffsets: %w", err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	// The lookups, without repeats, in a fixed order.
	results := map[clientOffsetsKey]*PartitionOffsets{}
	lookups := map[clientOffsetsKey][]int64{}
	var keys []clientOffsetsKey
	topics := make([]string, 0, len(req.Topics))
	for topic, reqs := range req.Topics {
		if len(reqs) > 0 {
			topics = append(topics, topic)
		}
		for _, r := range reqs {
			k := clientOffsetsKey{topic, int32(r.Partition)}
			if _, ok := results[k]; !ok {
				results[k] = &PartitionOffsets{Partition: r.Partition, FirstOffset: -1, LastOffset: -1, Offsets: map[int64]time.Time{}}
				keys = append(keys, k)
			}
			if !clientOffsetsContains(lookups[k], r.Timestamp) {
				lookups[k] = append(lookups[k], r.Timestamp)
			}
		}
	}
	sort.Strings(topics)
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	res := &ListOffsetsResponse{Topics: make(map[string][]PartitionOffsets, len(topics))}
	if len(keys) == 0 {
		return res, nil
	}

	cl, err := c.metadata(ctx, addr, topics)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ListOffsets: %w", err)
	}
	leaders := clientOffsetsLeaders(cl, keys, results)

	// One request per leader and round: round i carries the i-th lookup of
	// every partition of the leader.
	type call struct {
		leader int32
		req    *protocol.ListOffsetsRequest
		resp   *protocol.ListOffsetsResponse
		err    error
	}
	var calls []*call
	byLeader := map[int32][]*call{}
	timeoutMs := clientOffsetsTimeoutMs(ctx)
	for _, k := range keys {
		leader, ok := leaders[k]
		if !ok {
			continue
		}
		for i, ts := range lookups[k] {
			if i == len(byLeader[leader]) {
				cc := &call{leader: leader, req: &protocol.ListOffsetsRequest{
					ReplicaID:      -1,
					IsolationLevel: int8(req.IsolationLevel), // v2+
					TimeoutMs:      timeoutMs,                // v10+
				}}
				byLeader[leader] = append(byLeader[leader], cc)
				calls = append(calls, cc)
			}
			r := byLeader[leader][i].req
			if n := len(r.Topics); n == 0 || r.Topics[n-1].Name != k.topic {
				r.Topics = append(r.Topics, protocol.ListOffsetsRequestTopic{Name: k.topic})
			}
			t := &r.Topics[len(r.Topics)-1]
			t.Partitions = append(t.Partitions, protocol.ListOffsetsRequestPartition{
				PartitionIndex:     k.partition,
				CurrentLeaderEpoch: -1, // v4+: not checked
				Timestamp:          ts,
			})
		}
	}

	// Each call keeps its own error: one failed leader fails only its
	// partitions.
	_ = clientEach(len(calls), func(i int) error {
		cc := calls[i]
		cc.resp, cc.err = responseAs[*protocol.ListOffsetsResponse](c.toBroker(ctx, cl, cc.leader, cc.req))
		return cc.err
	})

	failed := 0
	for _, cc := range calls {
		if cc.err != nil {
			failed++
			for _, t := range cc.req.Topics {
				for _, p := range t.Partitions {
					po := results[clientOffsetsKey{t.Name, p.PartitionIndex}]
					po.Error = fmt.Errorf("%w: %w", Unknown, cc.err)
				}
			}
			continue
		}
		if d := clientThrottle(cc.resp.ThrottleTimeMs); d > res.Throttle {
			res.Throttle = d
		}
		// What this request asked for, to tell the answers apart.
		asked := map[clientOffsetsKey]int64{}
		for _, t := range cc.req.Topics {
			for _, p := range t.Partitions {
				asked[clientOffsetsKey{t.Name, p.PartitionIndex}] = p.Timestamp
			}
		}
		for _, t := range cc.resp.Topics {
			for _, p := range t.Partitions {
				k := clientOffsetsKey{t.Name, p.PartitionIndex}
				ts, ok := asked[k]
				if !ok {
					continue // not asked for
				}
				delete(asked, k)
				po := results[k]
				if p.ErrorCode != 0 {
					po.Error = Error(p.ErrorCode)
					continue
				}
				switch ts {
				case FirstOffset:
					po.FirstOffset = p.Offset
				case LastOffset:
					po.LastOffset = p.Offset
				default:
					po.Offsets[p.Offset] = clientTime(ts)
				}
			}
		}
		for k := range asked {
			if po := results[k]; po.Error == nil {
				po.Error = fmt.Errorf("%w: broker %d did not answer for partition %d of %q", Unknown, cc.leader, k.partition, k.topic)
			}
		}
	}
	if failed > 0 && failed == len(calls) {
		return nil, fmt.Errorf("kafka.(*Client).ListOffsets: %w", calls[0].err)
	}

	for _, k := range keys {
		res.Topics[k.topic] = append(res.Topics[k.topic], *results[k])
	}
	return res, nil
}

// clientOffsetsLeaders returns the leader of every partition in keys that
// has a live one; the others get their error in results.
func clientOffsetsLeaders(cl *clientCluster, keys []clientOffsetsKey, results map[clientOffsetsKey]*PartitionOffsets) map[clientOffsetsKey]int32 {
	type partInfo struct {
		leader int32
		code   int16
	}
	topicErr := map[string]int16{}
	parts := map[clientOffsetsKey]partInfo{}
	for _, t := range cl.metadata.Topics {
		if t.ErrorCode != 0 {
			topicErr[t.Name] = t.ErrorCode
			continue
		}
		for _, p := range t.Partitions {
			parts[clientOffsetsKey{t.Name, p.PartitionIndex}] = partInfo{p.LeaderID, p.ErrorCode}
		}
	}
	leaders := make(map[clientOffsetsKey]int32, len(keys))
	for _, k := range keys {
		if code, ok := topicErr[k.topic]; ok {
			results[k].Error = Error(code)
			continue
		}
		p, ok := parts[k]
		switch _, live := cl.brokers[p.leader]; {
		case !ok:
			results[k].Error = UnknownTopicOrPartition
		case p.leader < 0 || !live:
			code := p.code
			if code == 0 {
				code = int16(LeaderNotAvailable)
			}
			results[k].Error = Error(code)
		default:
			leaders[k] = p.leader
		}
	}
	return leaders
}

func clientOffsetsContains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// clientOffsetsMillis is a time as Kafka timestamps write it; the zero time
// is 0. clientTime is its inverse.
func clientOffsetsMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// clientOffsetsTimeoutMs bounds a broker's wait for offsets in tiered
// storage (ListOffsets v10+): what is left of ctx, else 30s.
func clientOffsetsTimeoutMs(ctx context.Context) int32 {
	d := 30 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		d = time.Until(deadline)
	}
	return protocol.Millis(d)
}

// OffsetFetchRequest is the input of Client.OffsetFetch.
type OffsetFetchRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// GroupID is the consumer group whose offsets are read.
	GroupID string

	// Topics maps topic names to the partitions to read. nil or empty asks
	// for every partition the group has committed offsets for (brokers
	// support this from Kafka 0.10.2).
	Topics map[string][]int
}

// OffsetFetchResponse is the output of Client.OffsetFetch.
type OffsetFetchResponse struct {
	// Throttle is how long the broker throttled the request (quotas).
	Throttle time.Duration

	// Topics maps topic names to their partitions' committed offsets,
	// ordered by partition.
	Topics map[string][]OffsetFetchPartition

	// Error is the coordinator's error for the whole group, if any;
	// errors.Is matches it against kafka.Error codes.
	Error error
}

// OffsetFetchPartition is a group's committed offset of one partition.
type OffsetFetchPartition struct {
	Partition int

	// CommittedOffset is the group's committed offset, or -1 when the group
	// has none for the partition.
	CommittedOffset int64

	// Metadata is the string committed along with the offset.
	Metadata string

	// Error is the coordinator's error for the partition, if any.
	Error error
}

// OffsetFetch reads a group's committed offsets from its coordinator.
func (c *Client) OffsetFetch(ctx context.Context, req *OffsetFetchRequest) (*OffsetFetchResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).OffsetFetch: nil request")
	}
	var topics []protocol.OffsetFetchRequestTopic // nil: all topics (v2+)
	if len(req.Topics) > 0 {
		topics = make([]protocol.OffsetFetchRequestTopic, 0, len(req.Topics))
		for _, name := range clientSortedKeys(req.Topics) {
			ps := req.Topics[name]
			idx := make([]int32, len(ps))
			for i, p := range ps {
				idx[i] = int32(p)
			}
			topics = append(topics, protocol.OffsetFetchRequestTopic{Name: name, PartitionIndexes: idx})
		}
	}
	r, err := responseAs[*protocol.OffsetFetchResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, int8(CoordinatorKeyTypeConsumer), &protocol.OffsetFetchRequest{
		GroupID: req.GroupID, // v1-7
		Topics:  topics,      // v1-7
		Groups: []protocol.OffsetFetchRequestGroup{{ // v8+
			GroupID:     req.GroupID,
			MemberEpoch: -1, // v9+: not a KIP-848 member
			Topics:      topics,
		}},
	}))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetFetch: %w", err)
	}
	resTopics, code := r.Topics, r.ErrorCode
	if len(r.Groups) > 0 { // v8+
		g := r.Groups[0]
		for _, x := range r.Groups {
			if x.GroupID == req.GroupID {
				g = x
				break
			}
		}
		resTopics, code = g.Topics, g.ErrorCode
	}
	res := &OffsetFetchResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetFetchPartition, len(resTopics)),
		Error:    errorFromCode(code),
	}
	for _, t := range resTopics {
		ps := make([]OffsetFetchPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = OffsetFetchPartition{
				Partition:       int(p.PartitionIndex),
				CommittedOffset: p.CommittedOffset,
				Metadata:        deref(p.Metadata),
				Error:           errorFromCode(p.ErrorCode),
			}
		}
		res.Topics[t.Name] = append(res.Topics[t.Name], ps...)
	}
	for _, ps := range res.Topics {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	}
	return res, nil
}

// OffsetCommit is one offset to commit.
type OffsetCommit struct {
	Partition int
	Offset    int64
	Metadata  string
}

// OffsetCommitRequest is the input of Client.OffsetCommit.
type OffsetCommitRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// GroupID is the consumer group committing.
	GroupID string

	// GenerationID and MemberID identify the committing member in the
	// group's current generation. A group with no active members accepts
	// commits with generation -1 and an empty member id.
	GenerationID int
	MemberID     string

	// InstanceID is the member's static group instance id, if it has one
	// (KIP-345).
	InstanceID string

	// Topics maps topic names to the offsets to commit.
	Topics map[string][]OffsetCommit
}

// OffsetCommitResponse is the output of Client.OffsetCommit.
type OffsetCommitResponse struct {
	// Throttle is how long the broker throttled the request (quotas).
	Throttle time.Duration

	// Topics maps topic names to the outcome of each partition's commit,
	// ordered by partition.
	Topics map[string][]OffsetCommitPartition
}

// OffsetCommitPartition is the outcome of one partition's commit.
type OffsetCommitPartition struct {
	Partition int

	// Error is why the offset was not committed, if it was not.
	Error error
}

// clientOffsetsRetention is the retention kafka-go's Client asks for
// committed offsets from brokers that take one (OffsetCommit v2-4).
const clientOffsetsRetention = 24 * time.Hour

// OffsetCommit commits offsets for a group at the group's coordinator.
func (c *Client) OffsetCommit(ctx context.Context, req *OffsetCommitRequest) (*OffsetCommitResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).OffsetCommit: nil request")
	}
	preq := &protocol.OffsetCommitRequest{
		GroupID:         req.GroupID,
		GenerationID:    int32(req.GenerationID),
		MemberID:        req.MemberID,
		RetentionTimeMs: clientOffsetsRetention.Milliseconds(), // v2-4
		Topics:          make([]protocol.OffsetCommitRequestTopic, 0, len(req.Topics)),
	}
	preq.GroupInstanceID = clientGroupsNullable(req.InstanceID) // v7+
	for _, name := range clientSortedKeys(req.Topics) {
		commits := req.Topics[name]
		ps := make([]protocol.OffsetCommitRequestPartition, len(commits))
		for i, oc := range commits {
			md := oc.Metadata
			ps[i] = protocol.OffsetCommitRequestPartition{
				PartitionIndex:       int32(oc.Partition),
				CommittedOffset:      oc.Offset,
				CommittedLeaderEpoch: -1, // v6+: unknown
				CommittedMetadata:    &md,
			}
		}
		preq.Topics = append(preq.Topics, protocol.OffsetCommitRequestTopic{Name: name, Partitions: ps})
	}
	r, err := responseAs[*protocol.OffsetCommitResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, int8(CoordinatorKeyTypeConsumer), preq))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetCommit: %w", err)
	}
	res := &OffsetCommitResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetCommitPartition, len(r.Topics)),
	}
	for _, t := range r.Topics {
		ps := make([]OffsetCommitPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = OffsetCommitPartition{Partition: int(p.PartitionIndex), Error: errorFromCode(p.ErrorCode)}
		}
		res.Topics[t.Name] = append(res.Topics[t.Name], ps...)
	}
	for _, ps := range res.Topics {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	}
	return res, nil
}

// OffsetDelete names one partition of a topic whose committed offset is
// deleted.
type OffsetDelete struct {
	Topic     string
	Partition int
}

// OffsetDeleteRequest is the input of Client.OffsetDelete.
type OffsetDeleteRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// GroupID is the consumer group whose offsets are deleted.
	GroupID string

	// Topics maps topic names to the partitions whose offsets are deleted.
	Topics map[string][]int
}

// OffsetDeleteResponse is the output of Client.OffsetDelete.
type OffsetDeleteResponse struct {
	// Error is the coordinator's error for the whole group (e.g. the group
	// does not exist, or has active members), if any.
	Error error

	// Throttle is how long the broker throttled the request (quotas).
	Throttle time.Duration

	// Topics maps topic names to the outcome of each partition's
	// deletion, ordered by partition.
	Topics map[string][]OffsetDeletePartition
}

// OffsetDeletePartition is the outcome of deleting one partition's offset.
type OffsetDeletePartition struct {
	Partition int

	// Error is why the offset was not deleted (e.g. the group is still
	// subscribed to the topic), if it was not.
	Error error
}

// OffsetDelete deletes committed offsets of a group at the group's
// coordinator (Kafka 2.4+). The group must not be consuming the topics.
func (c *Client) OffsetDelete(ctx context.Context, req *OffsetDeleteRequest) (*OffsetDeleteResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).OffsetDelete: nil request")
	}
	preq := &protocol.OffsetDeleteRequest{
		GroupID: req.GroupID,
		Topics:  make([]protocol.OffsetDeleteRequestTopic, 0, len(req.Topics)),
	}
	for _, name := range clientSortedKeys(req.Topics) {
		idx := req.Topics[name]
		ps := make([]protocol.OffsetDeleteRequestPartition, len(idx))
		for i, p := range idx {
			ps[i].PartitionIndex = int32(p)
		}
		preq.Topics = append(preq.Topics, protocol.OffsetDeleteRequestTopic{Name: name, Partitions: ps})
	}
	r, err := responseAs[*protocol.OffsetDeleteResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, int8(CoordinatorKeyTypeConsumer), preq))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetDelete: %w", err)
	}
	res := &OffsetDeleteResponse{
		Error:    errorFromCode(r.ErrorCode),
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetDeletePartition, len(r.Topics)),
	}
	for _, t := range r.Topics {
		ps := make([]OffsetDeletePartition, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = OffsetDeletePartition{Partition: int(p.PartitionIndex), Error: errorFromCode(p.ErrorCode)}
		}
		res.Topics[t.Name] = append(res.Topics[t.Name], ps...)
	}
	for _, ps := range res.Topics {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	}
	return res, nil
}

// TopicAndGroup names a consumer group and one of its topics, for
// Client.ConsumerOffsets.
//
// Deprecated: use Client.OffsetFetch.
type TopicAndGroup struct {
	Topic   string
	GroupId string
}

// ConsumerOffsets returns the committed offset of a group for every
// partition of a topic, by partition; -1 for partitions the group has not
// committed.
//
// Deprecated: use Client.OffsetFetch.
func (c *Client) ConsumerOffsets(ctx context.Context, tg TopicAndGroup) (map[int]int64, error) {
	md, err := c.Metadata(ctx, &MetadataRequest{Topics: []string{tg.Topic}})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ConsumerOffsets: reading the partitions of %q: %w", tg.Topic, err)
	}
	var topic *Topic
	for i := range md.Topics {
		if md.Topics[i].Name == tg.Topic {
			topic = &md.Topics[i]
		}
	}
	switch {
	case topic == nil:
		return nil, fmt.Errorf("kafka.(*Client).ConsumerOffsets: reading the partitions of %q: %w", tg.Topic, UnknownTopicOrPartition)
	case topic.Error != nil:
		return nil, fmt.Errorf("kafka.(*Client).ConsumerOffsets: reading the partitions of %q: %w", tg.Topic, topic.Error)
	}
	ids := make([]int, len(topic.Partitions))
	for i, p := range topic.Partitions {
		ids[i] = p.ID
	}
	of, err := c.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: tg.GroupId, Topics: map[string][]int{tg.Topic: ids}})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ConsumerOffsets: %w", err)
	}
	if of.Error != nil {
		return nil, fmt.Errorf("kafka.(*Client).ConsumerOffsets: reading the offsets of group %q: %w", tg.GroupId, of.Error)
	}
	offsets := make(map[int]int64, len(ids))
	for _, p := range of.Topics[tg.Topic] {
		offsets[p.Partition] = p.CommittedOffset
	}
	return offsets, nil
}
