package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// passwordEnv holds the SASL password when no flag gives it: unlike a
// flag, it shows neither in ps nor in shell history.
const passwordEnv = "KAFKA_PASSWORD"

// readPassword returns the SASL password: from -password-file, else from
// the deprecated -password (with a warning on stderr), else from
// KAFKA_PASSWORD. given is false when only the environment gave it: it is
// then ignored without -sasl, since it may be meant for another program.
func readPassword(flagValue, file string, stderr io.Writer) (pw string, given bool, err error) {
	switch {
	case file != "" && flagValue != "":
		return "", false, errors.New("-password and -password-file both give the password: use -password-file")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", false, fmt.Errorf("-password-file: reading the password: %w", err)
		}
		pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if pw == "" {
			return "", false, fmt.Errorf("-password-file %s: the file is empty", file)
		}
		return pw, true, nil
	case flagValue != "":
		fmt.Fprintf(stderr, "kafka-rack: warning: -password is deprecated: other users see it in ps and it stays in shell history; use -password-file or %s\n", passwordEnv)
		return flagValue, true, nil
	}
	return os.Getenv(passwordEnv), false, nil
}
