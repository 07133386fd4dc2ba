package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each bad command line is refused before any connection, with an error
// naming the flag and the cause.
func TestKafkaRackBadFlags(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	base := []string{"-brokers", "127.0.0.1:1", "-topic", "t", "-rack", "b"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no brokers", []string{"-topic", "t", "-rack", "b"}, "-brokers is required"},
		{"no topic", []string{"-brokers", "h:9092", "-rack", "b"}, "-topic is required"},
		{"no rack", []string{"-brokers", "h:9092", "-topic", "t"}, "-rack is required"},
		{"empty topic list", []string{"-brokers", "h:9092", "-topic", " , ", "-rack", "b"}, "-topic is required"},
		{"unknown flag", append(base, "-rackz", "b"), "flag provided but not defined: -rackz"},
		{"bad duration", append(base, "-observe", "soon"), `invalid value "soon" for flag -observe`},
		{"negative rate", append(base, "-rate", "-1"), "-rate -1: must be 0 or more MB/s"},
		{"rate and observe", append(base, "-rate", "1", "-observe", "1m"), "-rate and -observe both give the consume rate"},
		{"negative price", append(base, "-price", "-0.01"), "-price -0.01: must be 0 or more"},
		{"unknown sasl", append(base, "-sasl", "gssapi", "-user", "u"), `-sasl "gssapi": unknown mechanism`},
		{"sasl without user", append(base, "-sasl", "plain"), "-sasl plain needs -user"},
		{"user without sasl", append(base, "-user", "u", "-password", "p"), "-user and the password need -sasl"},
		{"missing CA", append(base, "-tls-ca", filepath.Join(t.TempDir(), "none.pem")), "-tls-ca: reading the CA file"},
		{"CA not PEM", append(base, "-tls-ca", notPEM), "no PEM certificate in the file"},
		{"stray argument", append(base, "extra"), `unexpected argument "extra"`},
		{"rack and racks", append(base, "-racks", "a,b"), "-rack and -racks both give the client's rack"},
		{"rack twice in racks", []string{"-brokers", "h:9092", "-topic", "t", "-racks", "a,b,a"}, `-racks: rack "a" is given twice`},
		{"watch a fleet", []string{"-brokers", "h:9092", "-topic", "t", "-racks", "a,b", "-watch"}, "-watch runs Readers in one rack"},
		{"min-share above 1", append(base, "-min-share", "99"), "-min-share 99: must be a share from 0 to 1"},
		{"min-share negative", append(base, "-min-share", "-0.5"), "-min-share -0.5: must be a share from 0 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tc.args, &out, &errOut)
			require.Error(t, err)
			require.True(t, errors.Is(err, errUsage), "%v", err)
			require.Contains(t, err.Error(), tc.want)
			require.Empty(t, out.String(), "nothing printed on stdout")
		})
	}
}

// Several mistakes are reported together.
func TestKafkaRackFlagsAllErrors(t *testing.T) {
	_, err := parseFlags([]string{"-rate", "-2"}, &bytes.Buffer{})
	require.Error(t, err)
	for _, want := range []string{"-brokers is required", "-topic is required", "-rack is required", "-rate -2"} {
		require.Contains(t, err.Error(), want)
	}
}

func TestKafkaRackFlagsGood(t *testing.T) {
	cfg, err := parseFlags([]string{"-brokers", "a:9092, b:9092", "-topic", "t", "-rack", "use1-az1", "-tls-insecure",
		"-sasl", "SCRAM-SHA-512", "-user", "u", "-password", "p", "-observe", "30s", "-client-select", "-json"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"a:9092", "b:9092"}, cfg.Brokers)
	require.NotNil(t, cfg.TLS)
	require.True(t, cfg.TLS.InsecureSkipVerify)
	require.Equal(t, "SCRAM-SHA-512", cfg.SASL.Name())
	require.Equal(t, defaultPrice, cfg.Price)
	require.True(t, cfg.ClientSelect && cfg.JSON)
	require.Equal(t, []string{"t"}, cfg.Topics)
	require.Equal(t, []string{"use1-az1"}, cfg.Racks)

	cfg, err = parseFlags([]string{"-brokers", "a:9092", "-topic", "t, u", "-racks", "use1-az1, use1-az2,use1-az4", "-min-share", "0.99"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"t", "u"}, cfg.Topics)
	require.Equal(t, []string{"use1-az1", "use1-az2", "use1-az4"}, cfg.Racks)
	require.Equal(t, 0.99, cfg.MinShare)
}

// An unreachable cluster is an error naming what was being done.
func TestKafkaRackUnreachable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-brokers", "127.0.0.1:1", "-topic", "t", "-rack", "b", "-timeout", "2s"}, &out, &bytes.Buffer{})
	require.Error(t, err)
	require.False(t, errors.Is(err, errUsage))
	require.Contains(t, err.Error(), `reading the metadata of topic "t"`)
	require.Contains(t, err.Error(), "127.0.0.1:1")
}
