package protocol

// Election types of ElectLeadersRequest (v1+; v0 only knows preferred).
const (
	ElectionTypePreferred int8 = 0
	ElectionTypeUnclean   int8 = 1
)

// ElectLeadersRequest asks the controller to elect partition leaders.
// Version 0 always runs a preferred election: an unclean one needs v1+.
type ElectLeadersRequest struct {
	ElectionType int8 // v1+
	// TopicPartitions nil (null on the wire) means every partition.
	TopicPartitions []ElectLeadersRequestTopic
	TimeoutMs       int32
}

type ElectLeadersRequestTopic struct {
	Topic      string
	Partitions []int32
}

func (*ElectLeadersRequest) Key() ApiKey           { return ElectLeaders }
func (*ElectLeadersRequest) MinVersion() int16     { return 0 }
func (*ElectLeadersRequest) MaxVersion() int16     { return 2 }
func (*ElectLeadersRequest) FlexibleFrom() int16   { return 2 }
func (*ElectLeadersRequest) NewResponse() Response { return new(ElectLeadersResponse) }

func (r *ElectLeadersRequest) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int8(r.ElectionType)
	}
	e.ArrayLen(lenOrNull(r.TopicPartitions))
	for _, t := range r.TopicPartitions {
		e.String(t.Topic)
		e.Int32Array(t.Partitions)
		e.Tags()
	}
	e.Int32(r.TimeoutMs)
	e.Tags()
}

func (r *ElectLeadersRequest) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ElectionType = d.Int8()
	}
	if n := d.ArrayLen(); n > 0 {
		r.TopicPartitions = make([]ElectLeadersRequestTopic, n)
		for i := range r.TopicPartitions {
			t := &r.TopicPartitions[i]
			t.Topic = d.String()
			t.Partitions = d.Int32Array()
			d.Tags()
		}
	}
	r.TimeoutMs = d.Int32()
	d.Tags()
	return d.Err()
}

// ElectLeadersResponse reports the election result of every partition.
type ElectLeadersResponse struct {
	ThrottleTimeMs         int32
	ErrorCode              int16 // v1+
	ReplicaElectionResults []ElectLeadersResponseTopic
}

type ElectLeadersResponseTopic struct {
	Topic           string
	PartitionResult []ElectLeadersResponsePartition
}

type ElectLeadersResponsePartition struct {
	PartitionID  int32
	ErrorCode    int16
	ErrorMessage *string
}

func (*ElectLeadersResponse) Key() ApiKey       { return ElectLeaders }
func (r *ElectLeadersResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ElectLeadersResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	if v >= 1 {
		e.Int16(r.ErrorCode)
	}
	e.ArrayLen(len(r.ReplicaElectionResults))
	for _, t := range r.ReplicaElectionResults {
		e.String(t.Topic)
		e.ArrayLen(len(t.PartitionResult))
		for _, p := range t.PartitionResult {
			e.Int32(p.PartitionID)
			e.Int16(p.ErrorCode)
			e.NullableString(p.ErrorMessage)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *ElectLeadersResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if v >= 1 {
		r.ErrorCode = d.Int16()
	}
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.ReplicaElectionResults = make([]ElectLeadersResponseTopic, n)
		for i := range r.ReplicaElectionResults {
			t := &r.ReplicaElectionResults[i]
			t.Topic = d.String()
			if n := d.ArrayLenMin(d.minStruct(4+2, 1, 0)); n > 0 {
				t.PartitionResult = make([]ElectLeadersResponsePartition, n)
				for j := range t.PartitionResult {
					p := &t.PartitionResult[j]
					p.PartitionID = d.Int32()
					p.ErrorCode = d.Int16()
					p.ErrorMessage = d.NullableString()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(ElectLeadersRequest) }) }
