package testing

import (
	stdtesting "testing"
)

func TestParseVersion(t *stdtesting.T) {
	for _, tc := range []struct {
		in   string
		want version
		bad  bool
	}{
		{in: "3.7.2", want: version{3, 7, 2}},
		{in: "3.7", want: version{3, 7, 0}},
		{in: "4", want: version{4, 0, 0}},
		{in: "4.x", want: version{4, 0, 0}},
		{in: "3.7.x", want: version{3, 7, 0}},
		{in: "v2.8.1", want: version{2, 8, 1}},
		{in: " 4.0.0-rc1 ", want: version{4, 0, 0}},
		{in: "3.10.1", want: version{3, 10, 1}},
		{in: "1.2.3.4", want: version{1, 2, 3}},
		{in: "", bad: true},
		{in: "latest", bad: true},
		{in: ".5", bad: true},
		{in: "3..7", bad: true},
	} {
		got, err := parseVersion(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseVersion(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestKafkaIsAtLeast(t *stdtesting.T) {
	for _, tc := range []struct {
		env, min string
		want     bool
	}{
		{"3.7.2", "3.7", true},
		{"3.7.2", "3.7.2", true},
		{"3.7.2", "3.7.3", false},
		{"3.7.2", "3.8", false},
		{"3.7.2", "2.8.2", true},
		{"3.7", "3.7.1", false},
		{"2.8.2", "3", false},
		{"4.4.0", "3.9.2", true},
		{"3.10.0", "3.9", true}, // numeric, not lexical
		{"", "9.9", true},       // unknown version: taken to be recent
		{"garbage", "9.9", true},
	} {
		t.Setenv("KAFKA_VERSION", tc.env)
		if got := KafkaIsAtLeast(tc.min); got != tc.want {
			t.Errorf("KAFKA_VERSION=%q: KafkaIsAtLeast(%q) = %v, want %v", tc.env, tc.min, got, tc.want)
		}
	}
}

func TestKafkaIsAtLeastPanicsOnBadArgument(t *stdtesting.T) {
	defer func() {
		if recover() == nil {
			t.Error("KafkaIsAtLeast(\"three\") did not panic")
		}
	}()
	KafkaIsAtLeast("three")
}
