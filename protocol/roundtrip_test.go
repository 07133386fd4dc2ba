package protocol

import (
	"reflect"
	"testing"
)

// roundTrip encodes req and resp at every version req implements, decodes
// them back through full frames (headers included) and checks that nothing
// changed. Empty slices must be nil in the values built: decoding yields nil
// for empty arrays. build returns the request and response values to use at version v
// (fields a version lacks must be left zero).
func roundTrip(t *testing.T, newReq func() Request, build func(v int16) (Request, Response)) {
	t.Helper()
	proto := newReq()
	for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
		req, resp := build(v)
		flexible := IsFlexible(req, v)

		frame := AppendRequest(nil, req, v, 42, "client")
		h, d, err := DecodeRequestHeader(frame[4:], func(k ApiKey) int16 {
			if k == req.Key() {
				return req.FlexibleFrom()
			}
			return -1
		})
		if err != nil {
			t.Fatalf("%s v%d: request header: %v", req.Key(), v, err)
		}
		if h.Key != req.Key() || h.Version != v || h.CorrelationID != 42 || h.ClientID == nil || *h.ClientID != "client" {
			t.Fatalf("%s v%d: request header mismatch: %+v", req.Key(), v, h)
		}
		got := reflect.New(reflect.TypeOf(req).Elem()).Interface().(Request)
		if err := got.Decode(d, v); err != nil {
			t.Fatalf("%s v%d: decoding request: %v", req.Key(), v, err)
		}
		if d.Remaining() != 0 {
			t.Fatalf("%s v%d: %d request bytes left after decoding", req.Key(), v, d.Remaining())
		}
		if !reflect.DeepEqual(req, got) {
			t.Fatalf("%s v%d: request round trip mismatch:\nwant %+v\n got %+v", req.Key(), v, req, got)
		}

		rframe := AppendResponse(nil, resp, v, flexible, 7)
		gotResp := req.NewResponse()
		if err := DecodeResponse(rframe[4:], gotResp, v, flexible, 7); err != nil {
			t.Fatalf("%s v%d: decoding response: %v", req.Key(), v, err)
		}
		if !reflect.DeepEqual(resp, gotResp) {
			t.Fatalf("%s v%d: response round trip mismatch:\nwant %+v\n got %+v", req.Key(), v, resp, gotResp)
		}
		// Every strict prefix of the response must fail cleanly, never panic.
		for cut := 4; cut < len(rframe); cut += 1 + len(rframe)/64 {
			_ = DecodeResponse(rframe[4:cut], req.NewResponse(), v, flexible, 7)
		}
	}
}

func TestApiVersionsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(ApiVersionsRequest) }, func(v int16) (Request, Response) {
		req := &ApiVersionsRequest{}
		if v >= 3 {
			req.ClientSoftwareName, req.ClientSoftwareVersion = "rackfetch", "1.0"
		}
		resp := &ApiVersionsResponse{ApiKeys: []ApiVersionsKey{{Fetch, 4, 13}, {Metadata, 0, 12}}}
		if v >= 1 {
			resp.ThrottleTimeMs = 5
		}
		return req, resp
	})
}

func TestHostileLength(t *testing.T) {
	// A 64-byte input claiming a 2 GB array must fail without allocating it.
	b := make([]byte, 64)
	b[2], b[3], b[4], b[5] = 0x7f, 0xff, 0xff, 0xff // array length after error code
	var r ApiVersionsResponse
	allocs := testing.AllocsPerRun(10, func() {
		r = ApiVersionsResponse{}
		_ = r.Decode(NewDecoder(b, false), 0)
	})
	if err := r.Decode(NewDecoder(b, false), 0); err == nil {
		t.Fatal("expected an error for a 2 GB array in 64 bytes")
	}
	if allocs > 2 {
		t.Fatalf("hostile length allocated %v times", allocs)
	}
}
