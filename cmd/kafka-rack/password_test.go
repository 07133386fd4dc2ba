package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/sasl/plain"
)

var saslBase = []string{"-brokers", "h:9092", "-topic", "t", "-rack", "b", "-sasl", "plain", "-user", "u"}

func plainPassword(t *testing.T, cfg *config) string {
	m, ok := cfg.SASL.(plain.Mechanism)
	require.True(t, ok, "%T", cfg.SASL)
	return m.Password
}

// The password comes from a file, a trailing newline dropped.
func TestKafkaRackPasswordFile(t *testing.T) {
	t.Setenv(passwordEnv, "from-env")
	file := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(file, []byte("s3cret\n"), 0o600))
	var stderr bytes.Buffer
	cfg, err := parseFlags(append(saslBase, "-password-file", file), &stderr)
	require.NoError(t, err)
	assert.Equal(t, "s3cret", plainPassword(t, cfg), "the file wins over the environment")
	assert.Empty(t, stderr.String())

	_, err = parseFlags(append(saslBase, "-password-file", filepath.Join(t.TempDir(), "none")), &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-password-file: reading the password")

	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	_, err = parseFlags(append(saslBase, "-password-file", empty), &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the file is empty")

	_, err = parseFlags(append(saslBase, "-password-file", file, "-password", "x"), &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-password and -password-file both give the password")
}

// KAFKA_PASSWORD gives the password without a flag; without -sasl it is
// ignored, as it may be meant for another program.
func TestKafkaRackPasswordEnv(t *testing.T) {
	t.Setenv(passwordEnv, "from-env")
	var stderr bytes.Buffer
	cfg, err := parseFlags(saslBase, &stderr)
	require.NoError(t, err)
	assert.Equal(t, "from-env", plainPassword(t, cfg))
	assert.Empty(t, stderr.String())

	cfg, err = parseFlags([]string{"-brokers", "h:9092", "-topic", "t", "-rack", "b"}, &stderr)
	require.NoError(t, err)
	assert.Nil(t, cfg.SASL)
}

// -password still works but warns that it leaks.
func TestKafkaRackPasswordFlagDeprecated(t *testing.T) {
	t.Setenv(passwordEnv, "from-env")
	var stderr bytes.Buffer
	cfg, err := parseFlags(append(saslBase, "-password", "p"), &stderr)
	require.NoError(t, err)
	assert.Equal(t, "p", plainPassword(t, cfg))
	assert.Contains(t, stderr.String(), "warning: -password is deprecated")
	assert.Contains(t, stderr.String(), "-password-file or KAFKA_PASSWORD")
}
