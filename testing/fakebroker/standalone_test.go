package fakebroker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A cluster started without a test serves requests until Close, and a
// misused helper panics instead of failing a test it does not have.
func TestStartWithoutTest(t *testing.T) {
	c, err := fakebroker.Start(fakebroker.Config{Brokers: 2, Racks: []string{"a", "b"}})
	require.NoError(t, err)
	c.CreateTopic("t", 1, 2)
	c.AppendRecords("t", 0, "x")
	cl := dial(t, c.Broker(1).Addr())
	p := fetchPart(t, cl, fetchReq(c, 0, "", 0), 12)
	assert.Equal(t, []string{"x"}, values(t, p, 0))

	assert.PanicsWithValue(t, `fakebroker: CreateTopic("t", 1, 2): error code 36`, func() { c.CreateTopic("t", 1, 2) })

	c.Close()
	assert.False(t, c.Broker(1).Running())
	assert.False(t, c.Broker(2).Running())
}

// Step.Delay holds the scripted answer at least that long.
func TestScriptedDelay(t *testing.T) {
	c := rackCluster(t)
	b := c.Broker(1)
	const delay = 200 * time.Millisecond
	b.Script(protocol.Fetch, 1, fakebroker.Step{Action: fakebroker.Action{Delay: delay}})
	cl := dial(t, b.Addr())

	start := time.Now()
	p := fetchPart(t, cl, fetchReq(c, 0, "", 0), 12)
	assert.GreaterOrEqual(t, time.Since(start), delay)
	assert.Len(t, values(t, p, 0), 3)
}
