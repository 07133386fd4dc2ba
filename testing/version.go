package testing

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// version is a Kafka version as major, minor, patch; missing parts are zero.
type version [3]int

// parseVersion reads "3", "3.7", "3.7.2" and ignores a suffix after the numbers ("4.0.0-rc1", "3.7.x").
func parseVersion(s string) (version, error) {
	var v version
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	num := strings.TrimSuffix(s[:end], ".")
	if num == "" {
		return v, fmt.Errorf("invalid Kafka version %q", s)
	}
	parts := strings.Split(num, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, fmt.Errorf("invalid Kafka version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

func (v version) atLeast(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] > w[i]
		}
	}
	return true
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// KafkaVersion is the version of the test cluster's brokers, from KAFKA_VERSION ("" when unset).
func KafkaVersion() string { return os.Getenv("KAFKA_VERSION") }

// KafkaIsAtLeast reports whether the test cluster runs Kafka semver or newer ("3.7", "2.8.1"), reading
// KAFKA_VERSION. When KAFKA_VERSION is unset or not a version, it reports true: the cluster is taken to be
// a recent one. semver is written in the test, so an invalid one panics.
func KafkaIsAtLeast(semver string) bool {
	want, err := parseVersion(semver)
	if err != nil {
		panic("ktesting.KafkaIsAtLeast: " + err.Error())
	}
	have, err := parseVersion(KafkaVersion())
	if err != nil {
		return true
	}
	return have.atLeast(want)
}
