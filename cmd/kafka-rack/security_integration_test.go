package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The TLS and SASL flags reach the cluster's TLS, SASL_PLAINTEXT and
// SASL_SSL listeners, for the plan's every request (metadata, configs,
// the rack fetches); a wrong password is an error naming the cause.
func TestKafkaRackSecurityFlags(t *testing.T) {
	c, ctx := krCluster(t)
	if len(c.TLSBrokers) == 0 || len(c.SASLBrokers) == 0 || len(c.SASLTLSBrokers) == 0 {
		t.Fatalf("the cluster's env names no TLS or SASL listeners (KAFKA_TLS_BROKERS, KAFKA_SASL_BROKERS, KAFKA_SASL_TLS_BROKERS)")
	}
	topic := krTopic(t, ctx, c)
	rack := c.Rack(c.BrokerIDs[1])
	plainFile := filepath.Join(t.TempDir(), "plain-password")
	require.NoError(t, os.WriteFile(plainFile, []byte(c.Plain.Password+"\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		env  string // KAFKA_PASSWORD
	}{
		{"tls", []string{"-brokers", strings.Join(c.TLSBrokers, ","), "-tls-ca", c.TLSCA}, ""},
		{"sasl plain, -password-file", []string{"-brokers", strings.Join(c.SASLBrokers, ","), "-sasl", "plain", "-user", c.Plain.User, "-password-file", plainFile}, ""},
		{"sasl scram-sha-256, KAFKA_PASSWORD", []string{"-brokers", strings.Join(c.SASLBrokers, ","), "-sasl", "scram-sha-256", "-user", c.SCRAM256.User}, c.SCRAM256.Password},
		{"sasl_ssl scram-sha-512", []string{"-brokers", strings.Join(c.SASLTLSBrokers, ","), "-tls-ca", c.TLSCA, "-sasl", "scram-sha-512", "-user", c.SCRAM512.User, "-password", c.SCRAM512.Password}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(passwordEnv, tc.env)
			var out, errOut bytes.Buffer
			err := run(ctx, append(tc.args, "-topic", topic, "-rack", rack, "-json"), &out, &errOut)
			require.NoError(t, err, "stderr: %s", errOut.String())
			var rep Report
			require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
			require.Len(t, rep.Partitions, krPartitions)
			for _, p := range rep.Partitions {
				require.Empty(t, p.Error, "partition %d", p.Partition)
			}
			for _, b := range rep.Brokers {
				require.Empty(t, b.Error, "broker %d", b.ID)
				require.Equal(t, c.Rack(b.ID), b.BrokerRack)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		err := run(ctx, []string{"-brokers", strings.Join(c.SASLBrokers, ","), "-sasl", "scram-sha-512", "-user", c.SCRAM512.User,
			"-password", "wrong", "-topic", topic, "-rack", rack}, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		require.Contains(t, err.Error(), "SASL Authentication Failed")
	})
	t.Run("tls without the CA", func(t *testing.T) {
		err := run(ctx, []string{"-brokers", strings.Join(c.TLSBrokers, ","), "-tls", "-topic", topic, "-rack", rack}, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		require.Contains(t, err.Error(), "certificate")
	})
}
