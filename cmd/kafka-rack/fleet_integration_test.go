package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// On the 3-rack cluster, a fleet spread over every rack reads every byte
// in its rack with client-side selection, and with the brokers' selector;
// without either only the third led in each rack, and -min-share 0.99
// fails the check with exit status 3.
func TestKafkaRackFleetGate(t *testing.T) {
	c, ctx := krCluster(t)
	topics := []string{krTopic(t, ctx, c), krTopic(t, ctx, c)}
	var racks []string
	for _, id := range c.BrokerIDs {
		racks = append(racks, c.Rack(id))
	}
	check := func(extra ...string) (int, Summary, string) {
		var out, errOut bytes.Buffer
		args := append([]string{"-brokers", strings.Join(c.Brokers, ","), "-topic", strings.Join(topics, ","),
			"-racks", strings.Join(racks, ","), "-rate", "1", "-json", "-min-share", "0.99"}, extra...)
		code := exitCode(run(ctx, args, &out, &errOut), &errOut)
		var s Summary
		require.NoError(t, json.Unmarshal(out.Bytes(), &s), "stdout: %s, stderr: %s", out.String(), errOut.String())
		return code, s, errOut.String()
	}
	code, s, errOut := check("-client-select")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Len(t, s.Reports, 2*len(racks))
	require.InDelta(t, 1.0, s.InRackShare, 1e-9)

	code, s, errOut = check()
	if c.HasSelector() {
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.InDelta(t, 1.0, s.InRackShare, 1e-9)
		return
	}
	require.Equal(t, 3, code, "stderr: %s", errOut)
	require.InDelta(t, 1.0/3, s.InRackShare, 1e-9)
	require.Contains(t, errOut, "below -min-share")
}
