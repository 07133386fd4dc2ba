package protocol

// CreatePartitionsRequest raises the partition count of existing topics.
type CreatePartitionsRequest struct {
	Topics       []CreatePartitionsRequestTopic
	TimeoutMs    int32
	ValidateOnly bool
}

type CreatePartitionsRequestTopic struct {
	Name  string
	Count int32 // the new total number of partitions
	// Assignments holds one entry per new partition; nil (null on the
	// wire) lets the broker place them.
	Assignments []CreatePartitionsRequestAssignment
}

type CreatePartitionsRequestAssignment struct {
	BrokerIDs []int32
}

func (*CreatePartitionsRequest) Key() ApiKey           { return CreatePartitions }
func (*CreatePartitionsRequest) MinVersion() int16     { return 0 }
func (*CreatePartitionsRequest) MaxVersion() int16     { return 3 }
func (*CreatePartitionsRequest) FlexibleFrom() int16   { return 2 }
func (*CreatePartitionsRequest) NewResponse() Response { return new(CreatePartitionsResponse) }

func (r *CreatePartitionsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.String(t.Name)
		e.Int32(t.Count)
		e.ArrayLen(lenOrNull(t.Assignments))
		for _, a := range t.Assignments {
			e.Int32Array(a.BrokerIDs)
			e.Tags()
		}
		e.Tags()
	}
	e.Int32(r.TimeoutMs)
	e.Bool(r.ValidateOnly)
	e.Tags()
}

func (r *CreatePartitionsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]CreatePartitionsRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			t.Count = d.Int32()
			if n := d.ArrayLen(); n > 0 {
				t.Assignments = make([]CreatePartitionsRequestAssignment, n)
				for j := range t.Assignments {
					t.Assignments[j].BrokerIDs = d.Int32Array()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	r.TimeoutMs = d.Int32()
	r.ValidateOnly = d.Bool()
	d.Tags()
	return d.Err()
}

// CreatePartitionsResponse reports the outcome for every topic.
type CreatePartitionsResponse struct {
	ThrottleTimeMs int32
	Results        []CreatePartitionsResponseResult
}

type CreatePartitionsResponseResult struct {
	Name         string
	ErrorCode    int16
	ErrorMessage *string
}

func (*CreatePartitionsResponse) Key() ApiKey       { return CreatePartitions }
func (r *CreatePartitionsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *CreatePartitionsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Results))
	for _, res := range r.Results {
		e.String(res.Name)
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.Tags()
	}
	e.Tags()
}

func (r *CreatePartitionsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 2, 0)); n > 0 {
		r.Results = make([]CreatePartitionsResponseResult, n)
		for i := range r.Results {
			res := &r.Results[i]
			res.Name = d.String()
			res.ErrorCode = d.Int16()
			res.ErrorMessage = d.NullableString()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(CreatePartitionsRequest) }) }
