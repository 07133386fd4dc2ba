package protocol

// SyncGroupRequest ends a rebalance: the leader sends every member's
// assignment, the others send none and receive theirs.
type SyncGroupRequest struct {
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID *string // v3+
	ProtocolType    *string // v5+
	ProtocolName    *string // v5+
	Assignments     []SyncGroupRequestAssignment
}

// SyncGroupRequestAssignment is the assignment of one member (for
// consumers, an encoded ConsumerProtocolAssignment).
type SyncGroupRequestAssignment struct {
	MemberID   string
	Assignment []byte
}

func (*SyncGroupRequest) Key() ApiKey           { return SyncGroup }
func (*SyncGroupRequest) MinVersion() int16     { return 0 }
func (*SyncGroupRequest) MaxVersion() int16     { return 5 }
func (*SyncGroupRequest) FlexibleFrom() int16   { return 4 }
func (*SyncGroupRequest) NewResponse() Response { return new(SyncGroupResponse) }

func (r *SyncGroupRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	e.Int32(r.GenerationID)
	e.String(r.MemberID)
	if v >= 3 {
		e.NullableString(r.GroupInstanceID)
	}
	if v >= 5 {
		e.NullableString(r.ProtocolType)
		e.NullableString(r.ProtocolName)
	}
	e.ArrayLen(len(r.Assignments))
	for i := range r.Assignments {
		a := &r.Assignments[i]
		e.String(a.MemberID)
		e.NonNullBytes(a.Assignment)
		e.Tags()
	}
	e.Tags()
}

func (r *SyncGroupRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	r.GenerationID = d.Int32()
	r.MemberID = d.String()
	if v >= 3 {
		r.GroupInstanceID = d.NullableString()
	}
	if v >= 5 {
		r.ProtocolType = d.NullableString()
		r.ProtocolName = d.NullableString()
	}
	if n := d.ArrayLen(); n > 0 {
		r.Assignments = make([]SyncGroupRequestAssignment, n)
		for i := range r.Assignments {
			a := &r.Assignments[i]
			a.MemberID = d.String()
			a.Assignment = d.NonNullBytes()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// SyncGroupResponse carries the member's own assignment.
type SyncGroupResponse struct {
	ThrottleTimeMs int32 // v1+
	ErrorCode      int16
	ProtocolType   *string // v5+
	ProtocolName   *string // v5+
	Assignment     []byte
}

func (*SyncGroupResponse) Key() ApiKey       { return SyncGroup }
func (r *SyncGroupResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *SyncGroupResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Int16(r.ErrorCode)
	if v >= 5 {
		e.NullableString(r.ProtocolType)
		e.NullableString(r.ProtocolName)
	}
	e.NonNullBytes(r.Assignment)
	e.Tags()
}

func (r *SyncGroupResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.ErrorCode = d.Int16()
	if v >= 5 {
		r.ProtocolType = d.NullableString()
		r.ProtocolName = d.NullableString()
	}
	r.Assignment = d.NonNullBytes()
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(SyncGroupRequest) }) }
