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
		failed.ErrorMessage = strp("This server does not host this topic-partition.")
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
	checkBytes(t, wire(
		int32(2), int16(3), "foo", int16(3), "bar", // topic names
		int32(15000), // timeout 15000
	), 1, false, &DeleteTopicsRequest{TopicNames: []string{"foo", "bar"}, TimeoutMs: 15000})

	checkBytes(t, wire(
		byte(3), // topics: 2
		byte(4), "foo", [16]byte{}, byte(0),
		byte(0), [16]byte{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}, byte(0), // null name, by id
		int32(15000),
		byte(0),
	), 6, true, &DeleteTopicsRequest{
		Topics: []DeleteTopicsRequestTopic{
			{Name: "foo"},
			{TopicID: [16]byte{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}},
		},
		TimeoutMs: 15000,
	})

	checkBytes(t, wire(
		int32(0), int32(1), int16(3), "foo", int16(41), // throttle, 1 result: NOT_CONTROLLER
	), 1, false, &DeleteTopicsResponse{
		Responses: []DeleteTopicsResponseTopic{{Name: "foo", ErrorCode: 41}},
	})

	checkBytes(t, wire(
		int32(0), byte(2),
		byte(4), "foo", int16(0), byte(10), "disabled!", byte(0), // v5: error message
		byte(0),
	), 5, true, &DeleteTopicsResponse{
		Responses: []DeleteTopicsResponseTopic{{Name: "foo", ErrorMessage: strp("disabled!")}},
	})
}
