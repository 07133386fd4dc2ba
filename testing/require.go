package testing

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	stdtesting "testing"
)

// Required reports whether integration tests must run: CI or KAFKA_REQUIRE is set (and not "0"/"false").
// Then a missing cluster fails a test instead of skipping it.
func Required() bool { return required(os.Getenv) }

func required(getenv func(string) string) bool {
	return isSet(getenv("CI")) || isSet(getenv("KAFKA_REQUIRE"))
}

func isSet(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// RequireCluster returns the test cluster described by the environment. Without one (KAFKA_BROKERS unset)
// it skips the test, or fails it when Required. With -short it always skips: -short runs unit tests only.
// The test holds a shared lock on the cluster until it ends, so that chaos in another test (of any
// package) waits for it, and it waits for such chaos to end (see LockCluster).
func RequireCluster(t stdtesting.TB) *Cluster {
	t.Helper()
	c := requireCluster(t, stdtesting.Short(), os.Getenv)
	lockCluster(t, false)
	return c
}

func requireCluster(t stdtesting.TB, short bool, getenv func(string) string) *Cluster {
	t.Helper()
	if short {
		t.Skip("ktesting: integration test skipped in -short mode")
	}
	c, err := parseCluster(getenv)
	switch {
	case err == ErrNoCluster && required(getenv):
		t.Fatal("ktesting: no Kafka cluster (KAFKA_BROKERS is unset), and CI/KAFKA_REQUIRE says integration " +
			"tests must run: run `make test`, or `make kafka-up` and `source .kafka/env`")
	case err == ErrNoCluster:
		t.Skip("ktesting: no Kafka cluster (KAFKA_BROKERS is unset): run `make test`, or `make kafka-up` and `source .kafka/env`")
	case err != nil:
		t.Fatal(err)
	}
	return c
}

var topicSeq atomic.Uint64

// UniqueTopic returns a topic name no other test (and no earlier run) uses: "kt-" + the test's name + a
// sequence number + random hex, made of characters Kafka accepts, at most 200 long.
func UniqueTopic(t stdtesting.TB) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("kt-")
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default: // '/' of subtests, '.', '_' (Kafka warns when topics differ only in '.' and '_'), the rest
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 160 {
		name = name[:160]
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatalf("ktesting: random topic suffix: %v", err)
	}
	return name + "-" + strconv.FormatUint(topicSeq.Add(1), 10) + "-" + hex.EncodeToString(rnd[:])
}
