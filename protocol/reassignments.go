package protocol

// AlterPartitionReassignmentsRequest starts or cancels replica
// reassignments (KIP-455). Version 0 is flexible. The v1 of newer brokers
// (AllowReplicationFactorChange, KIP-860) is not implemented.
type AlterPartitionReassignmentsRequest struct {
	TimeoutMs int32
	Topics    []AlterPartitionReassignmentsRequestTopic
}

type AlterPartitionReassignmentsRequestTopic struct {
	Name       string
	Partitions []AlterPartitionReassignmentsRequestPartition
}

type AlterPartitionReassignmentsRequestPartition struct {
	PartitionIndex int32
	// Replicas is the target replica set; nil (null on the wire) cancels
	// the partition's pending reassignment.
	Replicas []int32
}

func (*AlterPartitionReassignmentsRequest) Key() ApiKey         { return AlterPartitionReassignments }
func (*AlterPartitionReassignmentsRequest) MinVersion() int16   { return 0 }
func (*AlterPartitionReassignmentsRequest) MaxVersion() int16   { return 0 }
func (*AlterPartitionReassignmentsRequest) FlexibleFrom() int16 { return 0 }
func (*AlterPartitionReassignmentsRequest) NewResponse() Response {
	return new(AlterPartitionReassignmentsResponse)
}

func (r *AlterPartitionReassignmentsRequest) Encode(e *Encoder, v int16) {
	e.Int32(r.TimeoutMs)
	e.ArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.Int32(p.PartitionIndex)
			e.NullableInt32Array(p.Replicas)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *AlterPartitionReassignmentsRequest) Decode(d *Decoder, v int16) error {
	r.TimeoutMs = d.Int32()
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]AlterPartitionReassignmentsRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if n := d.ArrayLen(); n > 0 {
				t.Partitions = make([]AlterPartitionReassignmentsRequestPartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					p.Replicas = d.Int32Array()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// AlterPartitionReassignmentsResponse reports a top-level error and the
// outcome for every partition.
type AlterPartitionReassignmentsResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ErrorMessage   *string
	Responses      []AlterPartitionReassignmentsResponseTopic
}

type AlterPartitionReassignmentsResponseTopic struct {
	Name       string
	Partitions []AlterPartitionReassignmentsResponsePartition
}

type AlterPartitionReassignmentsResponsePartition struct {
	PartitionIndex int32
	ErrorCode      int16
	ErrorMessage   *string
}

func (*AlterPartitionReassignmentsResponse) Key() ApiKey       { return AlterPartitionReassignments }
func (r *AlterPartitionReassignmentsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AlterPartitionReassignmentsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.ArrayLen(len(r.Responses))
	for _, t := range r.Responses {
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.Int32(p.PartitionIndex)
			e.Int16(p.ErrorCode)
			e.NullableString(p.ErrorMessage)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *AlterPartitionReassignmentsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Responses = make([]AlterPartitionReassignmentsResponseTopic, n)
		for i := range r.Responses {
			t := &r.Responses[i]
			t.Name = d.String()
			if n := d.ArrayLenMin(d.minStruct(4+2, 1, 0)); n > 0 {
				t.Partitions = make([]AlterPartitionReassignmentsResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
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

// ListPartitionReassignmentsRequest lists ongoing reassignments (KIP-455).
// Version 0 is flexible.
type ListPartitionReassignmentsRequest struct {
	TimeoutMs int32
	// Topics nil (null on the wire) lists every ongoing reassignment.
	Topics []ListPartitionReassignmentsRequestTopic
}

type ListPartitionReassignmentsRequestTopic struct {
	Name             string
	PartitionIndexes []int32
}

func (*ListPartitionReassignmentsRequest) Key() ApiKey         { return ListPartitionReassignments }
func (*ListPartitionReassignmentsRequest) MinVersion() int16   { return 0 }
func (*ListPartitionReassignmentsRequest) MaxVersion() int16   { return 0 }
func (*ListPartitionReassignmentsRequest) FlexibleFrom() int16 { return 0 }
func (*ListPartitionReassignmentsRequest) NewResponse() Response {
	return new(ListPartitionReassignmentsResponse)
}

func (r *ListPartitionReassignmentsRequest) Encode(e *Encoder, v int16) {
	e.Int32(r.TimeoutMs)
	e.ArrayLen(lenOrNull(r.Topics))
	for _, t := range r.Topics {
		e.String(t.Name)
		e.Int32Array(t.PartitionIndexes)
		e.Tags()
	}
	e.Tags()
}

func (r *ListPartitionReassignmentsRequest) Decode(d *Decoder, v int16) error {
	r.TimeoutMs = d.Int32()
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]ListPartitionReassignmentsRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			t.PartitionIndexes = d.Int32Array()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// ListPartitionReassignmentsResponse lists the ongoing reassignments.
type ListPartitionReassignmentsResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ErrorMessage   *string
	Topics         []ListPartitionReassignmentsResponseTopic
}

type ListPartitionReassignmentsResponseTopic struct {
	Name       string
	Partitions []ListPartitionReassignmentsResponsePartition
}

type ListPartitionReassignmentsResponsePartition struct {
	PartitionIndex   int32
	Replicas         []int32 // the current replica set
	AddingReplicas   []int32
	RemovingReplicas []int32
}

func (*ListPartitionReassignmentsResponse) Key() ApiKey       { return ListPartitionReassignments }
func (r *ListPartitionReassignmentsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ListPartitionReassignmentsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.ArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.Int32(p.PartitionIndex)
			e.Int32Array(p.Replicas)
			e.Int32Array(p.AddingReplicas)
			e.Int32Array(p.RemovingReplicas)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *ListPartitionReassignmentsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]ListPartitionReassignmentsResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if n := d.ArrayLenMin(d.minStruct(4, 0, 3)); n > 0 {
				t.Partitions = make([]ListPartitionReassignmentsResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					p.Replicas = d.Int32Array()
					p.AddingReplicas = d.Int32Array()
					p.RemovingReplicas = d.Int32Array()
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
	registerRequest(func() Request { return new(AlterPartitionReassignmentsRequest) })
	registerRequest(func() Request { return new(ListPartitionReassignmentsRequest) })
}
