package protocol

// The SCRAM credential APIs (KIP-554). Only v0 exists, and it is flexible.

const (
	DescribeUserScramCredentials ApiKey = 50
	AlterUserScramCredentials    ApiKey = 51
)

// DescribeUserScramCredentialsRequest lists the SCRAM mechanisms and
// iteration counts of users; nil Users (null) describes every user.
type DescribeUserScramCredentialsRequest struct {
	Users []string
}

func (*DescribeUserScramCredentialsRequest) Key() ApiKey         { return DescribeUserScramCredentials }
func (*DescribeUserScramCredentialsRequest) MinVersion() int16   { return 0 }
func (*DescribeUserScramCredentialsRequest) MaxVersion() int16   { return 0 }
func (*DescribeUserScramCredentialsRequest) FlexibleFrom() int16 { return 0 }
func (*DescribeUserScramCredentialsRequest) NewResponse() Response {
	return new(DescribeUserScramCredentialsResponse)
}

func (r *DescribeUserScramCredentialsRequest) Encode(e *Encoder, v int16) {
	// Users is an array of structs holding one name each.
	e.ArrayLen(lenOrNull(r.Users))
	for _, u := range r.Users {
		e.String(u)
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeUserScramCredentialsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(0, 1, 0)); n > 0 {
		r.Users = make([]string, n)
		for i := range r.Users {
			r.Users[i] = d.String()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

type DescribeUserScramCredentialsResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ErrorMessage   *string
	Results        []DescribeUserScramCredentialsResponseResult
}

type DescribeUserScramCredentialsResponseResult struct {
	User            string
	ErrorCode       int16
	ErrorMessage    *string
	CredentialInfos []DescribeUserScramCredentialsResponseCredential
}

type DescribeUserScramCredentialsResponseCredential struct {
	Mechanism  int8 // 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
	Iterations int32
}

func (*DescribeUserScramCredentialsResponse) Key() ApiKey       { return DescribeUserScramCredentials }
func (r *DescribeUserScramCredentialsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DescribeUserScramCredentialsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.ArrayLen(len(r.Results))
	for i := range r.Results {
		res := &r.Results[i]
		e.String(res.User)
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.ArrayLen(len(res.CredentialInfos))
		for _, c := range res.CredentialInfos {
			e.Int8(c.Mechanism)
			e.Int32(c.Iterations)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeUserScramCredentialsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	if n := d.ArrayLenMin(d.minStruct(2, 2, 1)); n > 0 {
		r.Results = make([]DescribeUserScramCredentialsResponseResult, n)
		for i := range r.Results {
			res := &r.Results[i]
			res.User = d.String()
			res.ErrorCode = d.Int16()
			res.ErrorMessage = d.NullableString()
			if n := d.ArrayLenMin(d.minStruct(5, 0, 0)); n > 0 {
				res.CredentialInfos = make([]DescribeUserScramCredentialsResponseCredential, n)
				for j := range res.CredentialInfos {
					c := &res.CredentialInfos[j]
					c.Mechanism = d.Int8()
					c.Iterations = d.Int32()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// AlterUserScramCredentialsRequest deletes and upserts SCRAM credentials.
// The client computes the salted password (PBKDF2 of the password with the
// salt and iterations); the password itself never goes on the wire.
type AlterUserScramCredentialsRequest struct {
	Deletions  []AlterUserScramCredentialsRequestDeletion
	Upsertions []AlterUserScramCredentialsRequestUpsertion
}

type AlterUserScramCredentialsRequestDeletion struct {
	Name      string
	Mechanism int8
}

type AlterUserScramCredentialsRequestUpsertion struct {
	Name           string
	Mechanism      int8
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

func (*AlterUserScramCredentialsRequest) Key() ApiKey         { return AlterUserScramCredentials }
func (*AlterUserScramCredentialsRequest) MinVersion() int16   { return 0 }
func (*AlterUserScramCredentialsRequest) MaxVersion() int16   { return 0 }
func (*AlterUserScramCredentialsRequest) FlexibleFrom() int16 { return 0 }
func (*AlterUserScramCredentialsRequest) NewResponse() Response {
	return new(AlterUserScramCredentialsResponse)
}

func (r *AlterUserScramCredentialsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Deletions))
	for _, del := range r.Deletions {
		e.String(del.Name)
		e.Int8(del.Mechanism)
		e.Tags()
	}
	e.ArrayLen(len(r.Upsertions))
	for _, u := range r.Upsertions {
		e.String(u.Name)
		e.Int8(u.Mechanism)
		e.Int32(u.Iterations)
		e.NonNullBytes(u.Salt)
		e.NonNullBytes(u.SaltedPassword)
		e.Tags()
	}
	e.Tags()
}

func (r *AlterUserScramCredentialsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(1, 1, 0)); n > 0 {
		r.Deletions = make([]AlterUserScramCredentialsRequestDeletion, n)
		for i := range r.Deletions {
			del := &r.Deletions[i]
			del.Name = d.String()
			del.Mechanism = d.Int8()
			d.Tags()
		}
	}
	if n := d.ArrayLenMin(d.minStruct(5, 1, 2)); n > 0 {
		r.Upsertions = make([]AlterUserScramCredentialsRequestUpsertion, n)
		for i := range r.Upsertions {
			u := &r.Upsertions[i]
			u.Name = d.String()
			u.Mechanism = d.Int8()
			u.Iterations = d.Int32()
			u.Salt = d.NonNullBytes()
			u.SaltedPassword = d.NonNullBytes()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// AlterUserScramCredentialsResponse has one result per user altered.
type AlterUserScramCredentialsResponse struct {
	ThrottleTimeMs int32
	Results        []AlterUserScramCredentialsResponseResult
}

type AlterUserScramCredentialsResponseResult struct {
	User         string
	ErrorCode    int16
	ErrorMessage *string
}

func (*AlterUserScramCredentialsResponse) Key() ApiKey       { return AlterUserScramCredentials }
func (r *AlterUserScramCredentialsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AlterUserScramCredentialsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Results))
	for _, res := range r.Results {
		e.String(res.User)
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.Tags()
	}
	e.Tags()
}

func (r *AlterUserScramCredentialsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 2, 0)); n > 0 {
		r.Results = make([]AlterUserScramCredentialsResponseResult, n)
		for i := range r.Results {
			res := &r.Results[i]
			res.User = d.String()
			res.ErrorCode = d.Int16()
			res.ErrorMessage = d.NullableString()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[DescribeUserScramCredentials] = "DescribeUserScramCredentials"
	apiNames[AlterUserScramCredentials] = "AlterUserScramCredentials"
	registerRequest(func() Request { return new(DescribeUserScramCredentialsRequest) })
	registerRequest(func() Request { return new(AlterUserScramCredentialsRequest) })
}
