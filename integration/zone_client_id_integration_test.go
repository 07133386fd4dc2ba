package integration

// The client ID that kafka.ZoneClientID builds reaches a real broker as it was built: the group
// coordinator reports each member's client ID (DescribeGroups), as the backends that route by zone read it.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

func TestZoneClientIDIntegrationReachesTheBroker(t *testing.T) {
	c := ktesting.RequireCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	ctx := testContext(t, time.Minute)
	for _, backend := range []kafka.ZoneBackend{kafka.ZoneWarpStream, kafka.ZoneInkless, kafka.ZoneBufstream} {
		t.Run(string(backend), func(t *testing.T) {
			id, err := kafka.ZoneClientID(backend, "orders", "use1-az4")
			require.NoError(t, err)
			group := ktesting.UniqueTopic(t) + "-g"
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Brokers, Topic: topic, GroupID: group,
				Dialer: &kafka.Dialer{ClientID: id, Timeout: 10 * time.Second}})
			defer r.Close()
			go r.FetchMessage(ctx) // joins the group; the topic is empty: it returns when the Reader closes
			cl := &kafka.Client{Addr: kafka.TCP(c.Brokers...)}
			var got []string
			eventually(t, 45*time.Second, "the member in DescribeGroups", func() bool {
				resp, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
				if err != nil || len(resp.Groups) != 1 {
					return false
				}
				got = got[:0]
				for _, m := range resp.Groups[0].Members {
					got = append(got, m.ClientID)
				}
				return len(got) == 1
			})
			assert.Equal(t, []string{id}, got)
		})
	}
}
