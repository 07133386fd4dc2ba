package protocol

// OffsetDelete (KIP-496) removes a group's committed offsets for some
// partitions. The group must have no active member subscribed to them.
// Kafka has a single, non-flexible version 0.
const OffsetDelete ApiKey = 47

// OffsetDeleteRequest names the partitions whose committed offsets the
// group's coordinator should forget.
type OffsetDeleteRequest struct {
	GroupID string
	Topics  []OffsetDeleteRequestTopic
}

type OffsetDeleteRequestTopic struct {
	Name       string
	Partitions []OffsetDeleteRequestPartition
}

type OffsetDeleteRequestPartition struct {
	PartitionIndex int32
}

func (*OffsetDeleteRequest) Key() ApiKey           { return OffsetDelete }
func (*OffsetDeleteRequest) MinVersion() int16     { return 0 }
func (*OffsetDeleteRequest) MaxVersion() int16     { return 0 }
func (*OffsetDeleteRequest) FlexibleFrom() int16   { return -1 }
func (*OffsetDeleteRequest) NewResponse() Response { return new(OffsetDeleteResponse) }

func (r *OffsetDeleteRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.Int32(p.PartitionIndex)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *OffsetDeleteRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]OffsetDeleteRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if m := d.ArrayLenMin(d.minStruct(4, 0, 0)); m > 0 {
				t.Partitions = make([]OffsetDeleteRequestPartition, m)
				for j := range t.Partitions {
					t.Partitions[j].PartitionIndex = d.Int32()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// OffsetDeleteResponse has a group-level error (e.g. the group does not
// exist, or is not empty) and one error per partition (e.g. the group is
// still subscribed to the topic).
type OffsetDeleteResponse struct {
	ErrorCode      int16
	ThrottleTimeMs int32
	Topics         []OffsetDeleteResponseTopic
}

type OffsetDeleteResponseTopic = TopicPartitionErrors

type OffsetDeleteResponsePartition = PartitionError

func (*OffsetDeleteResponse) Key() ApiKey       { return OffsetDelete }
func (r *OffsetDeleteResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *OffsetDeleteResponse) Encode(e *Encoder, v int16) {
	e.Int16(r.ErrorCode)
	e.Int32(r.ThrottleTimeMs)
	encodeTopicPartitionErrors(e, r.Topics)
	e.Tags()
}

func (r *OffsetDeleteResponse) Decode(d *Decoder, v int16) error {
	r.ErrorCode = d.Int16()
	r.ThrottleTimeMs = d.Int32()
	r.Topics = decodeTopicPartitionErrors(d)
	d.Tags()
	return d.Err()
}

func init() {
	// message.go's name table predates this message; the name is added here
	// so that this file stays the only one to touch for OffsetDelete.
	apiNames[OffsetDelete] = "OffsetDelete"
	registerRequest(func() Request { return new(OffsetDeleteRequest) })
}
