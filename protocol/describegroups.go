package protocol

// DescribeGroupsRequest asks a coordinator for the state and members of
// groups.
type DescribeGroupsRequest struct {
	Groups                      []string
	IncludeAuthorizedOperations bool // v3+
}

func (*DescribeGroupsRequest) Key() ApiKey           { return DescribeGroups }
func (*DescribeGroupsRequest) MinVersion() int16     { return 0 }
func (*DescribeGroupsRequest) MaxVersion() int16     { return 5 }
func (*DescribeGroupsRequest) FlexibleFrom() int16   { return 5 }
func (*DescribeGroupsRequest) NewResponse() Response { return new(DescribeGroupsResponse) }

func (r *DescribeGroupsRequest) Encode(e *Encoder, v int16) {
	e.StringArray(r.Groups)
	if v >= 3 {
		e.Bool(r.IncludeAuthorizedOperations)
	}
	e.Tags()
}

func (r *DescribeGroupsRequest) Decode(d *Decoder, v int16) error {
	r.Groups = d.StringArray()
	if v >= 3 {
		r.IncludeAuthorizedOperations = d.Bool()
	}
	d.Tags()
	return d.Err()
}

// DescribeGroupsResponse describes each requested group.
type DescribeGroupsResponse struct {
	ThrottleTimeMs int32 // v1+
	Groups         []DescribeGroupsResponseGroup
}

type DescribeGroupsResponseGroup struct {
	ErrorCode    int16
	GroupID      string
	GroupState   string
	ProtocolType string
	// ProtocolData is the chosen protocol (for consumers, the assignor).
	ProtocolData string
	Members      []DescribeGroupsResponseMember
	// AuthorizedOperations is a bit field; math.MinInt32 when not requested.
	AuthorizedOperations int32 // v3+
}

type DescribeGroupsResponseMember struct {
	MemberID         string
	GroupInstanceID  *string // v4+
	ClientID         string
	ClientHost       string
	MemberMetadata   []byte
	MemberAssignment []byte
}

func (*DescribeGroupsResponse) Key() ApiKey       { return DescribeGroups }
func (r *DescribeGroupsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DescribeGroupsResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.ArrayLen(len(r.Groups))
	for i := range r.Groups {
		g := &r.Groups[i]
		e.Int16(g.ErrorCode)
		e.String(g.GroupID)
		e.String(g.GroupState)
		e.String(g.ProtocolType)
		e.String(g.ProtocolData)
		e.ArrayLen(len(g.Members))
		for j := range g.Members {
			m := &g.Members[j]
			e.String(m.MemberID)
			if v >= 4 {
				e.NullableString(m.GroupInstanceID)
			}
			e.String(m.ClientID)
			e.String(m.ClientHost)
			e.NonNullBytes(m.MemberMetadata)
			e.NonNullBytes(m.MemberAssignment)
			e.Tags()
		}
		if v >= 3 {
			e.Int32(g.AuthorizedOperations)
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeGroupsResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(2+when(v >= 3, 4), 4, 1)); n > 0 {
		r.Groups = make([]DescribeGroupsResponseGroup, n)
		for i := range r.Groups {
			g := &r.Groups[i]
			g.ErrorCode = d.Int16()
			g.GroupID = d.String()
			g.GroupState = d.String()
			g.ProtocolType = d.String()
			g.ProtocolData = d.String()
			if m := d.ArrayLenMin(d.minStruct(0, 3+when(v >= 4, 1), 2)); m > 0 {
				g.Members = make([]DescribeGroupsResponseMember, m)
				for j := range g.Members {
					mb := &g.Members[j]
					mb.MemberID = d.String()
					if v >= 4 {
						mb.GroupInstanceID = d.NullableString()
					}
					mb.ClientID = d.String()
					mb.ClientHost = d.String()
					mb.MemberMetadata = d.NonNullBytes()
					mb.MemberAssignment = d.NonNullBytes()
					d.Tags()
				}
			}
			if v >= 3 {
				g.AuthorizedOperations = d.Int32()
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(DescribeGroupsRequest) }) }
