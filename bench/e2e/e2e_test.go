package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ktesting "github.com/rackfetch/kafka-go/testing"
)

func TestMain(m *testing.M) {
	MaybeChild() // Spawn re-executes this test binary as the child
	os.Exit(m.Run())
}

func TestRecordsDiffer(t *testing.T) {
	buf := make([]byte, 0, 256)
	k0, v0 := Record(buf, 0, 100)
	k0, v0 = append([]byte(nil), k0...), append([]byte(nil), v0...)
	k1, v1 := Record(buf, 1, 100)
	require.Len(t, k0, keySize)
	require.Len(t, v0, 100)
	require.Len(t, v1, 100)
	assert.NotEqual(t, k0, k1)
	assert.NotEqual(t, v0, v1)
	_, big := Record(buf, 7, 1024)
	assert.Len(t, big, 1024)

	for _, full := range []bool{false, true} {
		var a, b Sum
		a.Add(k0, v0, full)
		a.Add(k1, v1, full)
		b.Add(k1, v1, full)
		b.Add(k0, v0, full)
		assert.Equal(t, a, b, "order must not matter")
		var dup Sum
		dup.Add(k0, v0, full)
		dup.Add(k0, v0, full)
		assert.NotEqual(t, a, dup, "a repeated record must not pass for another")
	}
}

// TestEveryClientReadsEveryRecord smoke-runs one small setting for every
// client in both modes, each in a child process as the benchmark runs it,
// and checks that each read exactly the produced records (count, bytes and
// a full checksum of keys and values), and that the child's CPU, RSS and
// sockets were measured.
func TestEveryClientReadsEveryRecord(t *testing.T) {
	c := ktesting.RequireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	exe, err := os.Executable()
	require.NoError(t, err)
	base := Setting{Partitions: 6, ValueSize: 100, Records: 6000, FetchBytes: 1 << 20}
	require.NoError(t, EnsureTopic(ctx, c.Brokers, base, t.Logf))
	want := Expected(base.Records, base.ValueSize, true)
	require.Equal(t, int64(6000), want.Records)
	for _, mode := range []string{ModePartition, ModeGroup} {
		for _, client := range Clients {
			t.Run(mode+"/"+client, func(t *testing.T) {
				s := base
				s.Mode = mode
				spec := Spec{Setting: s, Client: client, Brokers: c.Brokers, KafkaVersion: c.Version,
					Timeout: time.Minute, FullSum: true}
				if mode == ModeGroup {
					spec.GroupID = "bench-e2e-test-" + client + "-" + time.Now().Format("150405.000000000")
				}
				run := Spawn(exe, spec, want)
				require.Empty(t, run.Error)
				assert.Equal(t, want, run.Report.Sum)
				assert.True(t, run.OK())
				assert.Positive(t, run.CPU)
				assert.Positive(t, run.Report.PeakRSS)
				assert.Less(t, run.MaxRSS, int64(1<<30), "a peak RSS over 1 GiB for 6000 records is not the child's")
				assert.Positive(t, run.Sockets, "the child's sockets were sampled")
				assert.Positive(t, run.RecordsPerSec())
				t.Logf("%s %s: %.0f records/s, %.2f CPU-s/GB, %d MB, %d sockets", mode, client,
					run.RecordsPerSec(), run.CPUPerGB(), run.MaxRSS>>20, run.Sockets)
			})
		}
	}
	t.Run("a wrong read is an error", func(t *testing.T) {
		spec := Spec{Setting: base, Client: Base, Brokers: c.Brokers, Timeout: time.Minute, FullSum: true}
		spec.Mode = ModePartition
		other := want
		other.Hash++
		run := Spawn(exe, spec, other)
		assert.Contains(t, run.Error, "read ")
		assert.False(t, run.OK())
		spec.Client = "no-such-client"
		run = Spawn(exe, spec, want)
		assert.Contains(t, run.Error, "no client")
	})
}
