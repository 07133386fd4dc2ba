package protocol

// MetadataRequest asks for the brokers of the cluster and the partitions of
// some or all topics.
//
// Topics distinguishes two cases that the wire keeps apart from v1 on:
//   - nil: all topics (sent as a null array);
//   - empty but non-nil (e.g. []MetadataRequestTopic{}): no topics, only the
//     brokers and the cluster (sent as an empty array).
//
// Decoding keeps the distinction too (a null array gives nil, an empty one a
// non-nil empty slice), unlike the other arrays of this package.
type MetadataRequest struct {
	Topics []MetadataRequestTopic
	// AllowAutoTopicCreation lets the broker create requested topics that do
	// not exist, if it is configured to. Kafka's default is true; the zero
	// value here is false.
	AllowAutoTopicCreation             bool // v4+
	IncludeClusterAuthorizedOperations bool // v8-10
	IncludeTopicAuthorizedOperations   bool // v8+
}

// MetadataRequestTopic names one topic, by name or (v12+ brokers) by id.
//
// Name is nullable from v10: Kafka topic names are never empty, so an empty
// Name is written as null there (to query by TopicID, which brokers only
// honour from v12) and a null name decodes as "".
type MetadataRequestTopic struct {
	TopicID [16]byte // v10+
	Name    string
}

func (*MetadataRequest) Key() ApiKey           { return Metadata }
func (*MetadataRequest) MinVersion() int16     { return 1 }
func (*MetadataRequest) MaxVersion() int16     { return 12 }
func (*MetadataRequest) FlexibleFrom() int16   { return 9 }
func (*MetadataRequest) NewResponse() Response { return new(MetadataResponse) }

func (r *MetadataRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(lenOrNull(r.Topics)) // null: all topics
	for i := range r.Topics {
		t := &r.Topics[i]
		if v >= 10 {
			e.UUID(t.TopicID)
			e.NullableName(t.Name)
		} else {
			e.String(t.Name)
		}
		e.Tags()
	}
	if v >= 4 {
		e.Bool(r.AllowAutoTopicCreation)
	}
	if v >= 8 {
		if v <= 10 {
			e.Bool(r.IncludeClusterAuthorizedOperations)
		}
		e.Bool(r.IncludeTopicAuthorizedOperations)
	}
	e.Tags()
}

func (r *MetadataRequest) Decode(d *Decoder, v int16) error {
	n := d.ArrayLen()
	switch {
	case n > 0:
		r.Topics = make([]MetadataRequestTopic, n)
	case n == 0 && d.Err() == nil:
		r.Topics = []MetadataRequestTopic{} // no topics, not all of them
	default:
		r.Topics = nil
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		if v >= 10 {
			t.TopicID = d.UUID()
			t.Name = d.NullableName()
		} else {
			t.Name = d.String()
		}
		d.Tags()
	}
	if v >= 4 {
		r.AllowAutoTopicCreation = d.Bool()
	}
	if v >= 8 {
		if v <= 10 {
			r.IncludeClusterAuthorizedOperations = d.Bool()
		}
		r.IncludeTopicAuthorizedOperations = d.Bool()
	}
	d.Tags()
	return d.Err()
}

// MetadataResponse describes the brokers of a cluster and the partitions of
// the topics asked for.
type MetadataResponse struct {
	ThrottleTimeMs              int32 // v3+
	Brokers                     []MetadataResponseBroker
	ClusterID                   *string // v2+
	ControllerID                int32   // v1+
	Topics                      []MetadataResponseTopic
	ClusterAuthorizedOperations int32 // v8-10
}

type MetadataResponseBroker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string // v1+; nil when the broker has no rack
}

// MetadataResponseTopic is one topic of a metadata response. Name is
// nullable from v12 (for topics asked by id that do not exist): null
// decodes as "" and "" is written as null there.
type MetadataResponseTopic struct {
	ErrorCode                 int16
	Name                      string
	TopicID                   [16]byte // v10+
	IsInternal                bool     // v1+
	Partitions                []MetadataResponsePartition
	TopicAuthorizedOperations int32 // v8+
}

type MetadataResponsePartition struct {
	ErrorCode       int16
	PartitionIndex  int32
	LeaderID        int32
	LeaderEpoch     int32 // v7+
	ReplicaNodes    []int32
	IsrNodes        []int32
	OfflineReplicas []int32 // v5+
}

func (*MetadataResponse) Key() ApiKey       { return Metadata }
func (r *MetadataResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *MetadataResponse) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Brokers))
	for i := range r.Brokers {
		b := &r.Brokers[i]
		e.Int32(b.NodeID)
		e.String(b.Host)
		e.Int32(b.Port)
		if v >= 1 {
			e.NullableString(b.Rack)
		}
		e.Tags()
	}
	if v >= 2 {
		e.NullableString(r.ClusterID)
	}
	if v >= 1 {
		e.Int32(r.ControllerID)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.Int16(t.ErrorCode)
		if v >= 12 {
			e.NullableName(t.Name)
		} else {
			e.String(t.Name)
		}
		if v >= 10 {
			e.UUID(t.TopicID)
		}
		if v >= 1 {
			e.Bool(t.IsInternal)
		}
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int16(p.ErrorCode)
			e.Int32(p.PartitionIndex)
			e.Int32(p.LeaderID)
			if v >= 7 {
				e.Int32(p.LeaderEpoch)
			}
			e.Int32Array(p.ReplicaNodes)
			e.Int32Array(p.IsrNodes)
			if v >= 5 {
				e.Int32Array(p.OfflineReplicas)
			}
			e.Tags()
		}
		if v >= 8 {
			e.Int32(t.TopicAuthorizedOperations)
		}
		e.Tags()
	}
	if v >= 8 && v <= 10 {
		e.Int32(r.ClusterAuthorizedOperations)
	}
	e.Tags()
}

func (r *MetadataResponse) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(4+4, 1+when(v >= 1, 1), 0)); n > 0 {
		r.Brokers = make([]MetadataResponseBroker, n)
		for i := range r.Brokers {
			b := &r.Brokers[i]
			b.NodeID = d.Int32()
			b.Host = d.String()
			b.Port = d.Int32()
			if v >= 1 {
				b.Rack = d.NullableString()
			}
			d.Tags()
		}
	}
	if v >= 2 {
		r.ClusterID = d.NullableString()
	}
	if v >= 1 {
		r.ControllerID = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(2+when(v >= 10, 16)+when(v >= 1, 1)+when(v >= 8, 4), 1, 1)); n > 0 {
		r.Topics = make([]MetadataResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.ErrorCode = d.Int16()
			if v >= 12 {
				t.Name = d.NullableName()
			} else {
				t.Name = d.String()
			}
			if v >= 10 {
				t.TopicID = d.UUID()
			}
			if v >= 1 {
				t.IsInternal = d.Bool()
			}
			if n := d.ArrayLenMin(d.minStruct(2+4+4+when(v >= 7, 4), 0, 2+when(v >= 5, 1))); n > 0 {
				t.Partitions = make([]MetadataResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.ErrorCode = d.Int16()
					p.PartitionIndex = d.Int32()
					p.LeaderID = d.Int32()
					if v >= 7 {
						p.LeaderEpoch = d.Int32()
					}
					p.ReplicaNodes = d.Int32Array()
					p.IsrNodes = d.Int32Array()
					if v >= 5 {
						p.OfflineReplicas = d.Int32Array()
					}
					d.Tags()
				}
			}
			if v >= 8 {
				t.TopicAuthorizedOperations = d.Int32()
			}
			d.Tags()
		}
	}
	if v >= 8 && v <= 10 {
		r.ClusterAuthorizedOperations = d.Int32()
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(MetadataRequest) }) }
