package protocol

import (
	"bytes"
	"testing"
)

// securitySamples are the ACL, client quota and SCRAM credential messages.
var securitySamples = []sample{
	{"DescribeAcls", func() Request { return new(DescribeAclsRequest) }, describeAclsSample},
	{"CreateAcls", func() Request { return new(CreateAclsRequest) }, createAclsSample},
	{"DeleteAcls", func() Request { return new(DeleteAclsRequest) }, deleteAclsSample},
	{"DescribeClientQuotas", func() Request { return new(DescribeClientQuotasRequest) }, describeClientQuotasSample},
	{"AlterClientQuotas", func() Request { return new(AlterClientQuotasRequest) }, alterClientQuotasSample},
	{"DescribeUserScramCredentials", func() Request { return new(DescribeUserScramCredentialsRequest) }, describeUserScramCredentialsSample},
	{"AlterUserScramCredentials", func() Request { return new(AlterUserScramCredentialsRequest) }, alterUserScramCredentialsSample},
}

// FuzzSecurityAdmin decodes arbitrary bytes as every security admin request
// and response at every version: no panic, and what decodes re-encodes to
// bytes that decode and encode again identically. (Bytes, not values, are
// compared: quota values may be NaN, which never equals itself.)
func FuzzSecurityAdmin(f *testing.F) {
	seedSamples(f, securitySamples, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range securitySamples {
			proto := s.newReq()
			for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
				flexible := IsFlexible(proto, v)
				securityFuzzReencode(t, data, v, flexible, func() Message { return proto.NewResponse() })
				securityFuzzReencode(t, data, v, flexible, func() Message { return s.newReq() })
			}
		}
	})
}

func securityFuzzReencode(t *testing.T, data []byte, v int16, flexible bool, newMsg func() Message) {
	t.Helper()
	m := newMsg()
	if m.Decode(NewDecoder(data, flexible), v) != nil {
		return
	}
	first := encoded(m, v, flexible)
	again := newMsg()
	d := NewDecoder(first, flexible)
	if err := again.Decode(d, v); err != nil || d.Remaining() != 0 {
		t.Fatalf("%T v%d: re-encoded bytes do not decode (err %v, %d left)", m, v, err, d.Remaining())
	}
	if second := encoded(again, v, flexible); !bytes.Equal(first, second) {
		t.Fatalf("%T v%d: encoding is not stable:\n% x\n% x", m, v, first, second)
	}
}
