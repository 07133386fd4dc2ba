package protocol

// DeleteTopicsRequest deletes topics by name (all versions) or by topic ID
// (v6+). Kafka 4.0 removed v0 (KIP-896).
type DeleteTopicsRequest struct {
	TopicNames []string                   // v0-5
	Topics     []DeleteTopicsRequestTopic // v6+
	TimeoutMs  int32
}

type DeleteTopicsRequestTopic struct {
	// Name is nullable on the wire; an empty name is sent as null, which
	// asks the broker to go by TopicID alone (topic names are never empty).
	Name    string
	TopicID [16]byte
}

func (*DeleteTopicsRequest) Key() ApiKey           { return DeleteTopics }
func (*DeleteTopicsRequest) MinVersion() int16     { return 1 }
func (*DeleteTopicsRequest) MaxVersion() int16     { return 6 }
func (*DeleteTopicsRequest) FlexibleFrom() int16   { return 4 }
func (*DeleteTopicsRequest) NewResponse() Response { return new(DeleteTopicsResponse) }

func (r *DeleteTopicsRequest) Encode(e *Encoder, v int16) {
	if v >= 6 {
		e.ArrayLen(len(r.Topics))
		for _, t := range r.Topics {
			e.NullableName(t.Name)
			e.UUID(t.TopicID)
			e.Tags()
		}
	} else {
		e.StringArray(r.TopicNames)
	}
	e.Int32(r.TimeoutMs)
	e.Tags()
}

func (r *DeleteTopicsRequest) Decode(d *Decoder, v int16) error {
	if v >= 6 {
		if n := d.ArrayLen(); n > 0 {
			r.Topics = make([]DeleteTopicsRequestTopic, n)
			for i := range r.Topics {
				t := &r.Topics[i]
				t.Name = d.NullableName()
				t.TopicID = d.UUID()
				d.Tags()
			}
		}
	} else {
		r.TopicNames = d.StringArray()
	}
	r.TimeoutMs = d.Int32()
	d.Tags()
	return d.Err()
}

// DeleteTopicsResponse reports the outcome for every topic of the request.
type DeleteTopicsResponse struct {
	ThrottleTimeMs int32 // v1+
	Responses      []DeleteTopicsResponseTopic
}

type DeleteTopicsResponseTopic struct {
	Name         string   // nullable v6+ (unknown topic ID): empty is null
	TopicID      [16]byte // v6+
	ErrorCode    int16
	ErrorMessage *string // v5+
}

func (*DeleteTopicsResponse) Key() ApiKey       { return DeleteTopics }
func (r *DeleteTopicsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DeleteTopicsResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Responses))
	for _, t := range r.Responses {
		if v >= 6 {
			e.NullableName(t.Name)
			e.UUID(t.TopicID)
		} else {
			e.String(t.Name)
		}
		e.Int16(t.ErrorCode)
		if v >= 5 {
			e.NullableString(t.ErrorMessage)
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DeleteTopicsResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(when(v >= 6, 16)+2, 1+when(v >= 5, 1), 0)); n > 0 {
		r.Responses = make([]DeleteTopicsResponseTopic, n)
		for i := range r.Responses {
			t := &r.Responses[i]
			if v >= 6 {
				t.Name = d.NullableName()
				t.TopicID = d.UUID()
			} else {
				t.Name = d.String()
			}
			t.ErrorCode = d.Int16()
			if v >= 5 {
				t.ErrorMessage = d.NullableString()
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(DeleteTopicsRequest) }) }
