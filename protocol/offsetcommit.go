package protocol

// OffsetCommitRequest commits consumed offsets for a group. Versions 0-1 are
// not implemented: Kafka 4.0 removed them (and with v1 the per-partition
// commit timestamp).
type OffsetCommitRequest struct {
	GroupID string
	// GenerationID is the spec's GenerationIdOrMemberEpoch: the generation
	// with the classic group protocol, -1 for a standalone consumer.
	GenerationID    int32   // v1+
	MemberID        string  // v1+
	GroupInstanceID *string // v7+
	RetentionTimeMs int64   // v2-4; -1 uses the broker's retention
	Topics          []OffsetCommitRequestTopic
}

type OffsetCommitRequestTopic struct {
	Name       string
	Partitions []OffsetCommitRequestPartition
}

type OffsetCommitRequestPartition struct {
	PartitionIndex       int32
	CommittedOffset      int64
	CommittedLeaderEpoch int32 // v6+; -1 when unknown
	CommittedMetadata    *string
}

func (*OffsetCommitRequest) Key() ApiKey           { return OffsetCommit }
func (*OffsetCommitRequest) MinVersion() int16     { return 2 }
func (*OffsetCommitRequest) MaxVersion() int16     { return 9 }
func (*OffsetCommitRequest) FlexibleFrom() int16   { return 8 }
func (*OffsetCommitRequest) NewResponse() Response { return new(OffsetCommitResponse) }

func (r *OffsetCommitRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	if v >= 1 {
		e.Int32(r.GenerationID)
		e.String(r.MemberID)
	}
	if v >= 7 {
		e.NullableString(r.GroupInstanceID)
	}
	if v >= 2 && v <= 4 {
		e.Int64(r.RetentionTimeMs)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.PartitionIndex)
			e.Int64(p.CommittedOffset)
			if v >= 6 {
				e.Int32(p.CommittedLeaderEpoch)
			}
			e.NullableString(p.CommittedMetadata)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *OffsetCommitRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	if v >= 1 {
		r.GenerationID = d.Int32()
		r.MemberID = d.String()
	}
	if v >= 7 {
		r.GroupInstanceID = d.NullableString()
	}
	if v >= 2 && v <= 4 {
		r.RetentionTimeMs = d.Int64()
	}
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]OffsetCommitRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if m := d.ArrayLen(); m > 0 {
				t.Partitions = make([]OffsetCommitRequestPartition, m)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					p.CommittedOffset = d.Int64()
					if v >= 6 {
						p.CommittedLeaderEpoch = d.Int32()
					}
					p.CommittedMetadata = d.NullableString()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// OffsetCommitResponse has an error code per committed partition.
type OffsetCommitResponse struct {
	ThrottleTimeMs int32 // v3+
	Topics         []OffsetCommitResponseTopic
}

type OffsetCommitResponseTopic = TopicPartitionErrors

type OffsetCommitResponsePartition = PartitionError

func (*OffsetCommitResponse) Key() ApiKey       { return OffsetCommit }
func (r *OffsetCommitResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *OffsetCommitResponse) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.Int32(r.ThrottleTimeMs)
	}
	encodeTopicPartitionErrors(e, r.Topics)
	e.Tags()
}

func (r *OffsetCommitResponse) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.Topics = decodeTopicPartitionErrors(d)
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(OffsetCommitRequest) }) }
