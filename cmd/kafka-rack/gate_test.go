package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// runFake runs the command against fc and returns its exit status, stdout
// and stderr.
func runFake(t *testing.T, fc interface{ Addrs() []string }, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	args = append([]string{"-brokers", strings.Join(fc.Addrs(), ","), "-timeout", "5s"}, args...)
	err := run(fakeCtx(t), args, &out, &errOut)
	return exitCode(err, &errOut), out.String(), errOut.String()
}

// -min-share gates a deploy: without a selector on the brokers (and no
// client-side choice) one partition of three is read in rack b, which
// fails; a selector, or the client's choice, passes.
func TestKafkaRackMinShare(t *testing.T) {
	code, out, errOut := runFake(t, fakeRacks(t, false), "-topic", "t", "-rack", "b", "-min-share", "0.99")
	assert.Equal(t, 3, code, "stderr: %s", errOut)
	assert.Contains(t, errOut, `below -min-share: 33.33% of the partitions read in rack(s) b of topic(s) t, below 99.00%`)
	assert.Contains(t, out, `1 of 3 partitions read in rack "b"`, "the report is printed before the verdict")

	code, _, errOut = runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "b", "-min-share", "0.99")
	assert.Equal(t, 0, code, "stderr: %s", errOut)

	code, _, errOut = runFake(t, fakeRacks(t, false), "-topic", "t", "-rack", "b", "-min-share", "0.99", "-client-select")
	assert.Equal(t, 0, code, "stderr: %s", errOut)

	code, _, errOut = runFake(t, fakeRacks(t, false), "-topic", "t", "-rack", "b")
	assert.Equal(t, 0, code, "no gate without -min-share; stderr: %s", errOut)
}

// A fleet spread over racks a, b, c: without a selector each partition is
// read in rack only by the third of the consumers in its leader's rack;
// with one, by all.
func TestKafkaRackFleet(t *testing.T) {
	code, out, errOut := runFake(t, fakeRacks(t, false), "-topic", "t", "-racks", "a,b,c", "-rate", "10", "-json", "-min-share", "0.5")
	require.Equal(t, 3, code, "stderr: %s", errOut)
	var s Summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Len(t, s.Reports, 3)
	assert.Equal(t, []string{"a", "b", "c"}, s.Racks)
	assert.InDelta(t, 1.0/3, s.InRackShare, 1e-9)
	assert.Equal(t, shareOfPartitions, s.InRackShareOf)
	require.NotNil(t, s.Cost)
	assert.InDelta(t, 1.0/3, s.Cost.LeaderInRackShare, 1e-9)
	assert.InDelta(t, 25920*2.0/3, s.Cost.CrossGBWithPlan, 1e-6, "10 MB/s for 30 days, two thirds crossing")
	assert.Contains(t, s.Cost.Assumptions[0], "spread evenly over racks a, b, c")

	code, out, errOut = runFake(t, fakeRacks(t, true), "-topic", "t", "-racks", "a,b,c", "-rate", "10", "-min-share", "0.99")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, out, "over topic(s) t and rack(s) a, b, c: 100.0% of the partitions read in the consumers' rack")
	assert.Contains(t, out, "cross-zone GB a month: 17280.0 without rack-aware fetching, 0.0 with it")
	assert.Equal(t, 1, strings.Count(out, "replica.selector.class\n"), "the brokers' table once:\n%s", out)
	assert.Equal(t, 3, strings.Count(out, "PARTITION"), "a plan per rack:\n%s", out)
}

// Several topics are checked together, each partition weighing the same.
func TestKafkaRackTopics(t *testing.T) {
	fc := fakeRacks(t, false)
	fc.CreateTopic("u", 1, 3) // its one partition is led by broker 1, in rack a
	code, out, errOut := runFake(t, fc, "-topic", "t,u", "-rack", "b", "-client-select", "-json")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	var s Summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Len(t, s.Reports, 2)
	assert.Equal(t, "t", s.Reports[0].Topic)
	assert.Equal(t, "u", s.Reports[1].Topic)
	require.Len(t, s.Reports[1].Partitions, 1)
	assert.Equal(t, 2, s.Reports[1].Partitions[0].Read.ID, "client-side choice of u/0 in rack b")
	assert.InDelta(t, 1.0, s.InRackShare, 1e-9)
}

func TestKafkaRackExitCodes(t *testing.T) {
	var buf bytes.Buffer
	assert.Equal(t, 0, exitCode(nil, &buf))
	assert.Empty(t, buf.String())
	assert.Equal(t, 2, exitCode(errUsage, &buf))
	assert.Equal(t, 3, exitCode(errBelowMinShare, &buf))
	assert.Equal(t, 1, exitCode(context.DeadlineExceeded, &buf))
}
