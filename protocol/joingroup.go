package protocol

// JoinGroupRequest joins (or rejoins) a consumer group. Versions 0-1 are not
// implemented: Kafka 4.0 removed them.
type JoinGroupRequest struct {
	GroupID            string
	SessionTimeoutMs   int32
	RebalanceTimeoutMs int32 // v1+
	MemberID           string
	GroupInstanceID    *string // v5+
	ProtocolType       string
	Protocols          []JoinGroupRequestProtocol
	Reason             *string // v8+
}

// JoinGroupRequestProtocol is one assignment protocol the member supports,
// with its metadata (for consumers, an encoded ConsumerProtocolSubscription).
type JoinGroupRequestProtocol struct {
	Name     string
	Metadata []byte
}

func (*JoinGroupRequest) Key() ApiKey           { return JoinGroup }
func (*JoinGroupRequest) MinVersion() int16     { return 2 }
func (*JoinGroupRequest) MaxVersion() int16     { return 9 }
func (*JoinGroupRequest) FlexibleFrom() int16   { return 6 }
func (*JoinGroupRequest) NewResponse() Response { return new(JoinGroupResponse) }

func (r *JoinGroupRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	e.Int32(r.SessionTimeoutMs)
	if v >= 1 {
		e.Int32(r.RebalanceTimeoutMs)
	}
	e.String(r.MemberID)
	if v >= 5 {
		e.NullableString(r.GroupInstanceID)
	}
	e.String(r.ProtocolType)
	e.ArrayLen(len(r.Protocols))
	for i := range r.Protocols {
		p := &r.Protocols[i]
		e.String(p.Name)
		e.NonNullBytes(p.Metadata)
		e.Tags()
	}
	if v >= 8 {
		e.NullableString(r.Reason)
	}
	e.Tags()
}

func (r *JoinGroupRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	r.SessionTimeoutMs = d.Int32()
	if v >= 1 {
		r.RebalanceTimeoutMs = d.Int32()
	}
	r.MemberID = d.String()
	if v >= 5 {
		r.GroupInstanceID = d.NullableString()
	}
	r.ProtocolType = d.String()
	if n := d.ArrayLen(); n > 0 {
		r.Protocols = make([]JoinGroupRequestProtocol, n)
		for i := range r.Protocols {
			p := &r.Protocols[i]
			p.Name = d.String()
			p.Metadata = d.NonNullBytes()
			d.Tags()
		}
	}
	if v >= 8 {
		r.Reason = d.NullableString()
	}
	d.Tags()
	return d.Err()
}

// JoinGroupResponse tells a member its id and generation; the leader also
// gets every member's metadata.
type JoinGroupResponse struct {
	ThrottleTimeMs int32 // v2+
	ErrorCode      int16
	GenerationID   int32
	ProtocolType   *string // v7+
	// ProtocolName is nullable from v7; a null is read as "".
	ProtocolName   string
	Leader         string
	SkipAssignment bool // v9+
	MemberID       string
	Members        []JoinGroupResponseMember
}

// JoinGroupResponseMember is one member of the group, sent to the leader.
type JoinGroupResponseMember struct {
	MemberID        string
	GroupInstanceID *string // v5+
	Metadata        []byte
}

func (*JoinGroupResponse) Key() ApiKey       { return JoinGroup }
func (r *JoinGroupResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *JoinGroupResponse) Encode(e *Encoder, v int16) {
	if v >= 2 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Int16(r.ErrorCode)
	e.Int32(r.GenerationID)
	if v >= 7 {
		e.NullableString(r.ProtocolType)
	}
	e.String(r.ProtocolName)
	e.String(r.Leader)
	if v >= 9 {
		e.Bool(r.SkipAssignment)
	}
	e.String(r.MemberID)
	e.ArrayLen(len(r.Members))
	for i := range r.Members {
		m := &r.Members[i]
		e.String(m.MemberID)
		if v >= 5 {
			e.NullableString(m.GroupInstanceID)
		}
		e.NonNullBytes(m.Metadata)
		e.Tags()
	}
	e.Tags()
}

func (r *JoinGroupResponse) Decode(d *Decoder, v int16) error {
	if v >= 2 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.ErrorCode = d.Int16()
	r.GenerationID = d.Int32()
	if v >= 7 {
		r.ProtocolType = d.NullableString()
	}
	r.ProtocolName = d.String()
	r.Leader = d.String()
	if v >= 9 {
		r.SkipAssignment = d.Bool()
	}
	r.MemberID = d.String()
	if n := d.ArrayLenMin(d.minStruct(0, 1+when(v >= 5, 1), 1)); n > 0 {
		r.Members = make([]JoinGroupResponseMember, n)
		for i := range r.Members {
			m := &r.Members[i]
			m.MemberID = d.String()
			if v >= 5 {
				m.GroupInstanceID = d.NullableString()
			}
			m.Metadata = d.NonNullBytes()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(JoinGroupRequest) }) }
