// Package profile starts the CPU profile and execution trace a bench child's
// environment asks for, for looking into one run.
package profile

import (
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// Start writes a CPU profile to the file named by the environment variable
// cpuEnv and an execution trace to the one named by traceEnv, each if set;
// the function it returns stops both.
func Start(cpuEnv, traceEnv string) (stop func()) {
	var stops []func()
	if path := os.Getenv(cpuEnv); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv(traceEnv); path != "" {
		if f, err := os.Create(path); err == nil && trace.Start(f) == nil {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
