package protocol

import "testing"

func deleteTopicsSample(v int16) (Request, Response) {
	req := &DeleteTopicsRequest{TimeoutMs: 15000}
	if v >= 6 {
		req.Topics = []DeleteTopicsRequestTopic{
			{Name: "orders"},
			{TopicID: [16]byte{0: 0x11, 15: 0x22}}, // by ID: null name
		}
	} else {
		req.TopicNames = []string{"orders", "events"}
	}
	ok := DeleteTopicsResponseTopic{Name: "orders"}
	failed := DeleteTopicsResponseTopic{Name: "events", ErrorCode: 3}
	if v >= 5 {
		failed.ErrorMessage = adminStr("This server does not host this topic-partition.")
	}
	if v >= 6 {
		ok.TopicID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		failed.Name = "" // unknown topic ID: null name
		failed.ErrorCode = 100
		failed.TopicID = [16]byte{0: 0x11, 15: 0x22}
	}
	resp := &DeleteTopicsResponse{ThrottleTimeMs: 3, Responses: []DeleteTopicsResponseTopic{ok, failed}}
	return req, resp
}

func TestDeleteTopicsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DeleteTopicsRequest) }, deleteTopicsSample)
}

func TestDeleteTopicsBytes(t *testing.T) {
	adminCheckBytes(t, adminHex(t, `
		00000002 0003 "foo" 0003 "bar" // topic names
		00003a98                       // timeout 15000
	`), 1, false, &DeleteTopicsRequest{TopicNames: []string{"foo", "bar"}, TimeoutMs: 15000}, new(DeleteTopicsRequest))

	adminCheckBytes(t, adminHex(t, `
		03                                     // topics: 2
		04 "foo" 00000000000000000000000000000000 00
		00 11111111111111111111111111111111 00 // null name, by id
		00003a98
		00
	`), 6, true, &DeleteTopicsRequest{
		Topics: []DeleteTopicsRequestTopic{
			{Name: "foo"},
			{TopicID: [16]byte{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}},
		},
		TimeoutMs: 15000,
	}, new(DeleteTopicsRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000 00000001 0003 "foo" 0029 // throttle, 1 result: NOT_CONTROLLER
	`), 1, false, &DeleteTopicsResponse{
		Responses: []DeleteTopicsResponseTopic{{Name: "foo", ErrorCode: 41}},
	}, new(DeleteTopicsResponse))

	adminCheckBytes(t, adminHex(t, `
		00000000 02
		04 "foo" 0000 0a "disabled!" 00 // v5: error message
		00
	`), 5, true, &DeleteTopicsResponse{
		Responses: []DeleteTopicsResponseTopic{{Name: "foo", ErrorMessage: adminStr("disabled!")}},
	}, new(DeleteTopicsResponse))
}
