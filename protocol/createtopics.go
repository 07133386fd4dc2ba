package protocol

import "encoding/binary"

// CreateTopicsRequest creates topics. Kafka 4.0 removed versions 0-1
// (KIP-896), so v2 is the oldest version every broker from 2.7 on accepts.
type CreateTopicsRequest struct {
	Topics       []CreateTopicsRequestTopic
	TimeoutMs    int32
	ValidateOnly bool // v1+
}

type CreateTopicsRequestTopic struct {
	Name string
	// NumPartitions and ReplicationFactor are -1 to use the broker defaults
	// (v4+) or when Assignments places every partition by hand.
	NumPartitions     int32
	ReplicationFactor int16
	Assignments       []CreateTopicsRequestAssignment
	Configs           []CreateTopicsRequestConfig
}

type CreateTopicsRequestAssignment struct {
	PartitionIndex int32
	BrokerIDs      []int32
}

type CreateTopicsRequestConfig struct {
	Name  string
	Value *string
}

func (*CreateTopicsRequest) Key() ApiKey           { return CreateTopics }
func (*CreateTopicsRequest) MinVersion() int16     { return 2 }
func (*CreateTopicsRequest) MaxVersion() int16     { return 7 }
func (*CreateTopicsRequest) FlexibleFrom() int16   { return 5 }
func (*CreateTopicsRequest) NewResponse() Response { return new(CreateTopicsResponse) }

func (r *CreateTopicsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.Int32(t.NumPartitions)
		e.Int16(t.ReplicationFactor)
		e.ArrayLen(len(t.Assignments))
		for _, a := range t.Assignments {
			e.Int32(a.PartitionIndex)
			e.Int32Array(a.BrokerIDs)
			e.Tags()
		}
		e.ArrayLen(len(t.Configs))
		for _, c := range t.Configs {
			e.String(c.Name)
			e.NullableString(c.Value)
			e.Tags()
		}
		e.Tags()
	}
	e.Int32(r.TimeoutMs)
	if v >= 1 {
		e.Bool(r.ValidateOnly)
	}
	e.Tags()
}

func (r *CreateTopicsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]CreateTopicsRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			t.NumPartitions = d.Int32()
			t.ReplicationFactor = d.Int16()
			if n := d.ArrayLen(); n > 0 {
				t.Assignments = make([]CreateTopicsRequestAssignment, n)
				for j := range t.Assignments {
					a := &t.Assignments[j]
					a.PartitionIndex = d.Int32()
					a.BrokerIDs = d.Int32Array()
					d.Tags()
				}
			}
			if n := d.ArrayLen(); n > 0 {
				t.Configs = make([]CreateTopicsRequestConfig, n)
				for j := range t.Configs {
					c := &t.Configs[j]
					c.Name = d.String()
					c.Value = d.NullableString()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	r.TimeoutMs = d.Int32()
	if v >= 1 {
		r.ValidateOnly = d.Bool()
	}
	d.Tags()
	return d.Err()
}

// CreateTopicsResponse reports the outcome for every topic of the request.
type CreateTopicsResponse struct {
	ThrottleTimeMs int32 // v2+
	Topics         []CreateTopicsResponseTopic
}

type CreateTopicsResponseTopic struct {
	Name         string
	TopicID      [16]byte // v7+
	ErrorCode    int16
	ErrorMessage *string // v1+
	// TopicConfigErrorCode is tagged field 0 (v5+): set when the broker
	// created the topic but could not return its configs.
	TopicConfigErrorCode int16
	NumPartitions        int32 // v5+
	ReplicationFactor    int16 // v5+
	// Configs (v5+) is nullable on the wire; nil is written as null.
	Configs []CreateTopicsResponseConfig
}

type CreateTopicsResponseConfig struct {
	Name         string
	Value        *string
	ReadOnly     bool
	ConfigSource int8
	IsSensitive  bool
}

func (*CreateTopicsResponse) Key() ApiKey       { return CreateTopics }
func (r *CreateTopicsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *CreateTopicsResponse) Encode(e *Encoder, v int16) {
	if v >= 2 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		if v >= 7 {
			e.UUID(t.TopicID)
		}
		e.Int16(t.ErrorCode)
		if v >= 1 {
			e.NullableString(t.ErrorMessage)
		}
		if v >= 5 {
			e.Int32(t.NumPartitions)
			e.Int16(t.ReplicationFactor)
			e.ArrayLen(lenOrNull(t.Configs))
			for _, c := range t.Configs {
				e.String(c.Name)
				e.NullableString(c.Value)
				e.Bool(c.ReadOnly)
				e.Int8(c.ConfigSource)
				e.Bool(c.IsSensitive)
				e.Tags()
			}
		}
		// A tagged field equal to its default (0) is left out, as Kafka does.
		if t.TopicConfigErrorCode != 0 {
			e.TagsWith(TaggedField{Tag: 0, Value: binary.BigEndian.AppendUint16(nil, uint16(t.TopicConfigErrorCode))})
		} else {
			e.Tags()
		}
	}
	e.Tags()
}

func (r *CreateTopicsResponse) Decode(d *Decoder, v int16) error {
	if v >= 2 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(when(v >= 7, 16)+2+when(v >= 5, 4+2), 1+when(v >= 1, 1), when(v >= 5, 1))); n > 0 {
		r.Topics = make([]CreateTopicsResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if v >= 7 {
				t.TopicID = d.UUID()
			}
			t.ErrorCode = d.Int16()
			if v >= 1 {
				t.ErrorMessage = d.NullableString()
			}
			if v >= 5 {
				t.NumPartitions = d.Int32()
				t.ReplicationFactor = d.Int16()
				if n := d.ArrayLenMin(d.minStruct(3, 2, 0)); n > 0 {
					t.Configs = make([]CreateTopicsResponseConfig, n)
					for j := range t.Configs {
						c := &t.Configs[j]
						c.Name = d.String()
						c.Value = d.NullableString()
						c.ReadOnly = d.Bool()
						c.ConfigSource = d.Int8()
						c.IsSensitive = d.Bool()
						d.Tags()
					}
				}
			}
			d.TagsWith(func(tag uint32, val []byte) {
				if tag != 0 {
					return
				}
				if len(val) != 2 {
					d.Failf("CreateTopics response: topic config error code tag has %d bytes", len(val))
					return
				}
				t.TopicConfigErrorCode = int16(binary.BigEndian.Uint16(val))
			})
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(CreateTopicsRequest) }) }
