package protocol

// OffsetForLeaderEpochRequest asks, per partition, for the end offset of a
// leader epoch, which a consumer uses to detect log truncation after a
// leader change (KIP-320).
type OffsetForLeaderEpochRequest struct {
	// ReplicaID (v3+) is -1 for a consumer (Kafka's default, -2, is the
	// "debug" consumer that may read beyond the high watermark).
	ReplicaID int32
	Topics    []OffsetForLeaderEpochRequestTopic
}

type OffsetForLeaderEpochRequestTopic struct {
	Topic      string
	Partitions []OffsetForLeaderEpochRequestPartition
}

type OffsetForLeaderEpochRequestPartition struct {
	Partition int32
	// CurrentLeaderEpoch fences requests made with stale metadata; -1 skips
	// the check.
	CurrentLeaderEpoch int32
	LeaderEpoch        int32 // the epoch to look up
}

func (*OffsetForLeaderEpochRequest) Key() ApiKey         { return OffsetForLeaderEpoch }
func (*OffsetForLeaderEpochRequest) MinVersion() int16   { return 2 }
func (*OffsetForLeaderEpochRequest) MaxVersion() int16   { return 4 }
func (*OffsetForLeaderEpochRequest) FlexibleFrom() int16 { return 4 }
func (*OffsetForLeaderEpochRequest) NewResponse() Response {
	return new(OffsetForLeaderEpochResponse)
}

func (r *OffsetForLeaderEpochRequest) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.Int32(r.ReplicaID)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Topic)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.Partition)
			if v >= 2 {
				e.Int32(p.CurrentLeaderEpoch)
			}
			e.Int32(p.LeaderEpoch)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *OffsetForLeaderEpochRequest) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.ReplicaID = d.Int32()
	}
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]OffsetForLeaderEpochRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Topic = d.String()
			if n := d.ArrayLen(); n > 0 {
				t.Partitions = make([]OffsetForLeaderEpochRequestPartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.Partition = d.Int32()
					if v >= 2 {
						p.CurrentLeaderEpoch = d.Int32()
					}
					p.LeaderEpoch = d.Int32()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

type OffsetForLeaderEpochResponse struct {
	ThrottleTimeMs int32 // v2+
	Topics         []OffsetForLeaderEpochResponseTopic
}

type OffsetForLeaderEpochResponseTopic struct {
	Topic      string
	Partitions []OffsetForLeaderEpochResponsePartition
}

type OffsetForLeaderEpochResponsePartition struct {
	ErrorCode   int16
	Partition   int32
	LeaderEpoch int32 // v1+: the largest epoch <= the requested one
	EndOffset   int64 // the end offset of LeaderEpoch, -1 if unknown
}

func (*OffsetForLeaderEpochResponse) Key() ApiKey       { return OffsetForLeaderEpoch }
func (r *OffsetForLeaderEpochResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *OffsetForLeaderEpochResponse) Encode(e *Encoder, v int16) {
	if v >= 2 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Topic)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int16(p.ErrorCode)
			e.Int32(p.Partition)
			if v >= 1 {
				e.Int32(p.LeaderEpoch)
			}
			e.Int64(p.EndOffset)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *OffsetForLeaderEpochResponse) Decode(d *Decoder, v int16) error {
	if v >= 2 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]OffsetForLeaderEpochResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Topic = d.String()
			if n := d.ArrayLenMin(d.minStruct(2+4+when(v >= 1, 4)+8, 0, 0)); n > 0 {
				t.Partitions = make([]OffsetForLeaderEpochResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.ErrorCode = d.Int16()
					p.Partition = d.Int32()
					if v >= 1 {
						p.LeaderEpoch = d.Int32()
					}
					p.EndOffset = d.Int64()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() {
	registerRequest(func() Request { return new(OffsetForLeaderEpochRequest) })
}
