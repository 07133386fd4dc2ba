package kafka

// Unit tests of ElectLeaders and the partition reassignment requests on
// the fake broker: they reach the controller alone, carry the caller's
// fields (nil and empty lists as kafka-go documents them), and map the
// controller's codes into the response.

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

func TestClientAdminElectLeaders(t *testing.T) {
	for _, v := range []int16{0, 2} { // no top-level error code in v0
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			fc, client, rec := clientAdminFake(t)
			fc.Broker(clientAdminController).SetMaxVersion(protocol.ElectLeaders, v)
			clientAdminAnswer(t, fc, clientAdminController, protocol.ElectLeaders, func(req protocol.Request) protocol.Response {
				r := req.(*protocol.ElectLeadersRequest)
				resp := &protocol.ElectLeadersResponse{ErrorCode: 31} // dropped at v0
				for _, tp := range r.TopicPartitions {
					out := protocol.ElectLeadersResponseTopic{Topic: tp.Topic}
					for _, p := range tp.Partitions {
						res := protocol.ElectLeadersResponsePartition{PartitionID: p}
						switch p {
						case 1:
							res.ErrorCode, res.ErrorMessage = 84, clientAdminStr("Leader election not needed for topic partition")
						case 2:
							res.ErrorCode = 3
						}
						out.PartitionResult = append(out.PartitionResult, res)
					}
					resp.ReplicaElectionResults = append(resp.ReplicaElectionResults, out)
				}
				return resp
			})
			resp, err := client.ElectLeaders(clientAdminCtx(t), &ElectLeadersRequest{Topic: "t", Partitions: []int{0, 1, 2}, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if v == 0 && resp.Error != nil || v > 0 && resp.Error != ClusterAuthorizationFailed {
				t.Errorf("v%d: Error = %v", v, resp.Error)
			}
			if len(resp.PartitionResults) != 3 || resp.PartitionResults[0] != (ElectLeadersResponsePartitionResult{Partition: 0}) {
				t.Fatalf("PartitionResults = %+v", resp.PartitionResults)
			}
			if p := resp.PartitionResults[1]; p.Partition != 1 || !errors.Is(p.Error, ElectionNotNeeded) || !strings.Contains(p.Error.Error(), "not needed") {
				t.Errorf("partition 1 = %+v, want ElectionNotNeeded with the message", p)
			}
			if p := resp.PartitionResults[2]; p != (ElectLeadersResponsePartitionResult{Partition: 2, Error: UnknownTopicOrPartition}) {
				t.Errorf("partition 2 = %+v, want UnknownTopicOrPartition", p)
			}
			got := clientAdminOnly(t, fc, clientAdminController, protocol.ElectLeaders, 1)[0]
			want := &protocol.ElectLeadersRequest{
				ElectionType:    protocol.ElectionTypePreferred,
				TopicPartitions: []protocol.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0, 1, 2}}},
				TimeoutMs:       3000,
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("request = %+v, want %+v", got, want)
			}

			// No partitions: an empty list for the topic, never null (which
			// would elect every partition of the cluster).
			if _, err := client.ElectLeaders(clientAdminCtx(t), &ElectLeadersRequest{Topic: "t"}); err != nil {
				t.Fatal(err)
			}
			sent := rec.requests(protocol.ElectLeaders)[1].req.(*protocol.ElectLeadersRequest)
			if len(sent.TopicPartitions) != 1 || sent.TopicPartitions[0].Partitions == nil || len(sent.TopicPartitions[0].Partitions) != 0 || sent.TimeoutMs != 0 {
				t.Errorf("request without partitions = %+v, want one topic with an empty list, timeout 0", sent)
			}
		})
	}
}

func TestClientAdminAlterPartitionReassignments(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	clientAdminAnswer(t, fc, clientAdminController, protocol.AlterPartitionReassignments, func(req protocol.Request) protocol.Response {
		resp := &protocol.AlterPartitionReassignmentsResponse{}
		for _, tp := range req.(*protocol.AlterPartitionReassignmentsRequest).Topics {
			out := protocol.AlterPartitionReassignmentsResponseTopic{Name: tp.Name}
			for _, p := range tp.Partitions {
				res := protocol.AlterPartitionReassignmentsResponsePartition{PartitionIndex: p.PartitionIndex}
				if p.PartitionIndex == 1 { // (decoded, null and empty look the same)
					res.ErrorCode, res.ErrorMessage = 85, clientAdminStr("no reassignment to cancel")
				}
				out.Partitions = append(out.Partitions, res)
			}
			resp.Responses = append(resp.Responses, out)
		}
		return resp
	})
	resp, err := client.AlterPartitionReassignments(clientAdminCtx(t), &AlterPartitionReassignmentsRequest{
		Topic: "main",
		Assignments: []AlterPartitionReassignmentsRequestAssignment{
			{PartitionID: 0, BrokerIDs: []int{2, 3}},
			{Topic: "other", PartitionID: 4, BrokerIDs: []int{1}},
			{PartitionID: 1}, // nil: cancel
			{Topic: "main", PartitionID: 2, BrokerIDs: []int{}},
		},
		Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || len(resp.PartitionResults) != 4 {
		t.Fatalf("response %+v", resp)
	}
	want := []AlterPartitionReassignmentsResponsePartitionResult{
		{Topic: "main", PartitionID: 0},
		{Topic: "main", PartitionID: 1},
		{Topic: "main", PartitionID: 2},
		{Topic: "other", PartitionID: 4},
	}
	for i, r := range resp.PartitionResults {
		e := r.Error
		r.Error = nil
		if r != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, r, want[i])
		}
		if cancelled := i == 1; cancelled != errors.Is(e, NoReassignmentInProgress) || !cancelled && e != nil {
			t.Errorf("result %d error = %v", i, e)
		}
	}

	clientAdminOnly(t, fc, clientAdminController, protocol.AlterPartitionReassignments, 1)
	sent := rec.requests(protocol.AlterPartitionReassignments)[0].req.(*protocol.AlterPartitionReassignmentsRequest)
	wantReq := &protocol.AlterPartitionReassignmentsRequest{
		TimeoutMs: 1500,
		Topics: []protocol.AlterPartitionReassignmentsRequestTopic{
			{Name: "main", Partitions: []protocol.AlterPartitionReassignmentsRequestPartition{
				{PartitionIndex: 0, Replicas: []int32{2, 3}},
				{PartitionIndex: 1, Replicas: nil},       // null on the wire: cancel
				{PartitionIndex: 2, Replicas: []int32{}}, // an empty set, for the broker to refuse
			}},
			{Name: "other", Partitions: []protocol.AlterPartitionReassignmentsRequestPartition{{PartitionIndex: 4, Replicas: []int32{1}}}},
		},
	}
	if !reflect.DeepEqual(sent, wantReq) {
		t.Errorf("request = %+v, want %+v", sent, wantReq)
	}

	// A top-level error, with its message.
	fc.Broker(clientAdminController).Handle(protocol.AlterPartitionReassignments, nil)
	clientAdminAnswer(t, fc, clientAdminController, protocol.AlterPartitionReassignments, func(protocol.Request) protocol.Response {
		return &protocol.AlterPartitionReassignmentsResponse{ErrorCode: 41, ErrorMessage: clientAdminStr("not the controller")}
	})
	resp, err = client.AlterPartitionReassignments(clientAdminCtx(t), &AlterPartitionReassignmentsRequest{Topic: "main"})
	if err != nil || !errors.Is(resp.Error, NotController) || !strings.Contains(resp.Error.Error(), "not the controller") || resp.PartitionResults != nil {
		t.Errorf("top-level error: %+v, %v", resp, err)
	}
}

func TestClientAdminListPartitionReassignments(t *testing.T) {
	fc, client, rec := clientAdminFake(t)
	clientAdminAnswer(t, fc, clientAdminController, protocol.ListPartitionReassignments, func(req protocol.Request) protocol.Response {
		return &protocol.ListPartitionReassignmentsResponse{Topics: []protocol.ListPartitionReassignmentsResponseTopic{
			{Name: "moving", Partitions: []protocol.ListPartitionReassignmentsResponsePartition{
				{PartitionIndex: 0, Replicas: []int32{1, 2, 3}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
				{PartitionIndex: 2, Replicas: []int32{2, 3}},
			}},
		}}
	})
	ctx := clientAdminCtx(t)

	// Every reassignment: Topics null on the wire.
	resp, err := client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ListPartitionReassignmentsResponseTopic{"moving": {Partitions: []ListPartitionReassignmentsResponsePartition{
		{PartitionIndex: 0, Replicas: []int{1, 2, 3}, AddingReplicas: []int{3}, RemovingReplicas: []int{1}},
		{PartitionIndex: 2, Replicas: []int{2, 3}},
	}}}
	if resp.Error != nil || !reflect.DeepEqual(resp.Topics, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	if sent := rec.requests(protocol.ListPartitionReassignments)[0].req.(*protocol.ListPartitionReassignmentsRequest); sent.Topics != nil || sent.TimeoutMs != 1000 {
		t.Errorf("request for everything = %+v, want null topics, 1000 ms", sent)
	}

	// Named topics, in name order.
	if _, err := client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{Topics: map[string]ListPartitionReassignmentsRequestTopic{
		"z": {PartitionIndexes: []int{3, 1}},
		"a": {PartitionIndexes: []int{0}},
	}}); err != nil {
		t.Fatal(err)
	}
	got := clientAdminOnly(t, fc, clientAdminController, protocol.ListPartitionReassignments, 2)[1]
	wantReq := &protocol.ListPartitionReassignmentsRequest{Topics: []protocol.ListPartitionReassignmentsRequestTopic{
		{Name: "a", PartitionIndexes: []int32{0}},
		{Name: "z", PartitionIndexes: []int32{3, 1}},
	}}
	if !reflect.DeepEqual(got, wantReq) {
		t.Errorf("request = %+v, want %+v", got, wantReq)
	}

	// Nothing in progress: an empty, non-nil map. A top-level error.
	fc.Broker(clientAdminController).Handle(protocol.ListPartitionReassignments, nil)
	clientAdminAnswer(t, fc, clientAdminController, protocol.ListPartitionReassignments, func(protocol.Request) protocol.Response {
		return &protocol.ListPartitionReassignmentsResponse{ErrorCode: 31}
	})
	resp, err = client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{})
	if err != nil || resp.Topics == nil || len(resp.Topics) != 0 || resp.Error != ClusterAuthorizationFailed {
		t.Errorf("empty answer: %+v, %v", resp, err)
	}
}
