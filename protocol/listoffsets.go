package protocol

// ListOffsetsRequest looks up, per partition, the offset matching a
// timestamp or one of the special timestamps (-1 latest, -2 earliest, -3
// max timestamp v7+, -4 earliest local v8+, -5 latest tiered v9+).
type ListOffsetsRequest struct {
	ReplicaID      int32 // -1 for a consumer
	IsolationLevel int8  // v2+: 0 read uncommitted, 1 read committed
	Topics         []ListOffsetsRequestTopic
	// TimeoutMs (v10+) bounds the wait for offsets held in remote
	// (tiered) storage (KIP-1075).
	TimeoutMs int32
}

type ListOffsetsRequestTopic struct {
	Name       string
	Partitions []ListOffsetsRequestPartition
}

type ListOffsetsRequestPartition struct {
	PartitionIndex     int32
	CurrentLeaderEpoch int32 // v4+; -1 when unknown
	Timestamp          int64
}

func (*ListOffsetsRequest) Key() ApiKey           { return ListOffsets }
func (*ListOffsetsRequest) MinVersion() int16     { return 1 }
func (*ListOffsetsRequest) MaxVersion() int16     { return 10 }
func (*ListOffsetsRequest) FlexibleFrom() int16   { return 6 }
func (*ListOffsetsRequest) NewResponse() Response { return new(ListOffsetsResponse) }

func (r *ListOffsetsRequest) Encode(e *Encoder, v int16) {
	e.Int32(r.ReplicaID)
	if v >= 2 {
		e.Int8(r.IsolationLevel)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.PartitionIndex)
			if v >= 4 {
				e.Int32(p.CurrentLeaderEpoch)
			}
			e.Int64(p.Timestamp)
			e.Tags()
		}
		e.Tags()
	}
	if v >= 10 {
		e.Int32(r.TimeoutMs)
	}
	e.Tags()
}

func (r *ListOffsetsRequest) Decode(d *Decoder, v int16) error {
	r.ReplicaID = d.Int32()
	if v >= 2 {
		r.IsolationLevel = d.Int8()
	}
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]ListOffsetsRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if n := d.ArrayLen(); n > 0 {
				t.Partitions = make([]ListOffsetsRequestPartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					if v >= 4 {
						p.CurrentLeaderEpoch = d.Int32()
					}
					p.Timestamp = d.Int64()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	if v >= 10 {
		r.TimeoutMs = d.Int32()
	}
	d.Tags()
	return d.Err()
}

type ListOffsetsResponse struct {
	ThrottleTimeMs int32 // v2+
	Topics         []ListOffsetsResponseTopic
}

type ListOffsetsResponseTopic struct {
	Name       string
	Partitions []ListOffsetsResponsePartition
}

type ListOffsetsResponsePartition struct {
	PartitionIndex int32
	ErrorCode      int16
	Timestamp      int64 // -1 when the offset has no timestamp
	Offset         int64
	LeaderEpoch    int32 // v4+
}

func (*ListOffsetsResponse) Key() ApiKey       { return ListOffsets }
func (r *ListOffsetsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ListOffsetsResponse) Encode(e *Encoder, v int16) {
	if v >= 2 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.PartitionIndex)
			e.Int16(p.ErrorCode)
			e.Int64(p.Timestamp)
			e.Int64(p.Offset)
			if v >= 4 {
				e.Int32(p.LeaderEpoch)
			}
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *ListOffsetsResponse) Decode(d *Decoder, v int16) error {
	if v >= 2 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]ListOffsetsResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if n := d.ArrayLenMin(d.minStruct(4+2+8+8+when(v >= 4, 4), 0, 0)); n > 0 {
				t.Partitions = make([]ListOffsetsResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					p.ErrorCode = d.Int16()
					p.Timestamp = d.Int64()
					p.Offset = d.Int64()
					if v >= 4 {
						p.LeaderEpoch = d.Int32()
					}
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(ListOffsetsRequest) }) }

// AddPartition adds p of topic to the request, under the topic's entry
// (made if the request has none yet).
func (r *ListOffsetsRequest) AddPartition(topic string, p ListOffsetsRequestPartition) {
	for i := len(r.Topics) - 1; i >= 0; i-- {
		if r.Topics[i].Name == topic {
			r.Topics[i].Partitions = append(r.Topics[i].Partitions, p)
			return
		}
	}
	r.Topics = append(r.Topics, ListOffsetsRequestTopic{Name: topic, Partitions: []ListOffsetsRequestPartition{p}})
}
