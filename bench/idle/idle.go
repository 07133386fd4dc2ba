// Package idle measures what a consumer costs while it has nothing to read:
// a topic of many partitions with a few records each is read to the end,
// then the consumer waits for more for a while, and the process's CPU, the
// requests it sends, its sockets, goroutines and memory are measured over
// that wait. Optionally one broker is killed once everything was read and
// never restarted during the run: a consumer must then forget it at a
// bounded pace, not dial it or re-read metadata in a loop.
//
// Each client runs in a child process of its own (Spawn), so its CPU and
// memory are its own.
package idle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	benchprofile "github.com/rackfetch/kafka-go/bench/profile"
	"github.com/rackfetch/kafka-go/bench/wire"
)

// Modes of consuming the topic.
const (
	// ModePartition reads every partition without a group: one Reader per
	// partition for kafka-go and this library, ConsumePartitions for
	// franz-go.
	ModePartition = "partition"
	// ModeGroup reads the topic as the only member of a fresh group.
	ModeGroup = "group"
)

// Spec is one child's run.
type Spec struct {
	Client     string        `json:"client"`
	Mode       string        `json:"mode"`
	Brokers    []string      `json:"brokers"`
	Topic      string        `json:"topic"`
	Partitions int           `json:"partitions"`
	Records    int           `json:"records"` // in the whole topic
	Rack       string        `json:"rack"`
	GroupID    string        `json:"group_id,omitempty"`
	ReadLimit  time.Duration `json:"read_limit"` // reading to the end must take less
	// Kill, when set, is run once everything was read (a command line,
	// split on spaces), and Settle is waited after it before the measured
	// window starts.
	Kill   string        `json:"kill,omitempty"`
	Settle time.Duration `json:"settle"`
	Idle   time.Duration `json:"idle"` // the measured window
}

// Snapshot is the wire counts by broker address.
type Snapshot = wire.Snapshot

// Report is what a child measured.
type Report struct {
	Read       time.Duration `json:"read"` // start to the last record
	Records    int64         `json:"records"`
	CPU        float64       `json:"cpu_s"`      // user+sys seconds in the window
	GCCPU      float64       `json:"gc_cpu_s"`   // of which the garbage collector's (the runtime's estimate)
	GCs        uint64        `json:"gcs"`        // garbage collections in the window
	Requests   Snapshot      `json:"requests"`   // in the window, by broker address
	Goroutines int           `json:"goroutines"` // at the window's end
	Sockets    int           `json:"sockets"`    // open at the window's end
	RSS        int64         `json:"rss"`        // bytes resident at the window's end
	Window     time.Duration `json:"window"`     // the window's actual length
	Error      string        `json:"error,omitempty"`
}

// RequestsPerSec is every request sent in the window, per second.
func (r Report) RequestsPerSec() float64 {
	return float64(r.Requests.Total().Requests) / r.Window.Seconds()
}

const (
	childEnv     = "BENCH_IDLE_CHILD"
	resultPrefix = "BENCH_IDLE_RESULT "
)

// MaybeChild runs a child's measurement and exits when the process was
// started by Spawn; otherwise it returns at once. Call it first in main.
func MaybeChild() {
	js, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	var spec Spec
	var rep Report
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		rep.Error = fmt.Sprintf("decoding the spec: %v", err)
	} else {
		rep = measure(spec)
	}
	out, _ := json.Marshal(rep)
	fmt.Printf("%s%s\n", resultPrefix, out)
	os.Exit(0)
}

// measure consumes in this process: read to the end, then the window.
func measure(s Spec) Report {
	f := consumers[s.Client][s.Mode]
	if f == nil {
		return Report{Error: fmt.Sprintf("no client %q in mode %q", s.Client, s.Mode)}
	}
	w := wire.New()
	mark := func(string) {}
	if path := os.Getenv(requestLogEnv); path != "" {
		var stop func()
		mark, stop = logRequests(w, path)
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		read    atomic.Int64
		allRead = make(chan struct{})
		start   = time.Now()
		rep     Report
	)
	done := make(chan error, 1)
	go func() {
		done <- f(ctx, s, w, func() {
			if read.Add(1) == int64(s.Records) {
				close(allRead)
			}
		})
	}()
	fail := func(format string, args ...any) Report {
		cancel()
		<-done
		rep.Error = fmt.Sprintf(format, args...)
		rep.Records = read.Load()
		return rep
	}
	select {
	case <-allRead:
		rep.Read = time.Since(start)
		mark("all read")
	case err := <-done:
		return fail("consuming ended before every record was read (%d of %d): %v", read.Load(), s.Records, err)
	case <-time.After(s.ReadLimit):
		return fail("read %d of %d records in %v", read.Load(), s.Records, s.ReadLimit)
	}
	if s.Kill != "" {
		args := strings.Fields(s.Kill)
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return fail("running %q: %v: %s", s.Kill, err, out)
		}
	}
	if s.Settle > 0 {
		select {
		case err := <-done:
			return fail("consuming ended while settling: %v", err)
		case <-time.After(s.Settle):
		}
	}
	stopProfile := profileWindow()
	gc0 := gcFigures()
	cpu0, before, t0 := cpuSeconds(), w.Snapshot(), time.Now()
	mark("window starts")
	select {
	case err := <-done:
		return fail("consuming ended in the window: %v", err)
	case <-time.After(s.Idle):
	}
	rep.CPU = cpuSeconds() - cpu0
	mark("window ends")
	gc1 := gcFigures()
	rep.GCCPU, rep.GCs = gc1.cpu-gc0.cpu, gc1.cycles-gc0.cycles
	stopProfile()
	rep.Window = time.Since(t0)
	rep.Requests = w.Snapshot().Sub(before)
	rep.Goroutines = runtime.NumGoroutine()
	rep.Sockets, _ = countSockets()
	rep.RSS, _ = statusBytes("VmRSS:")
	rep.Records = read.Load()
	cancel()
	if err := <-done; err != nil {
		rep.Error = fmt.Sprintf("closing: %v", err)
	}
	if extra := read.Load() - int64(s.Records); extra != 0 {
		rep.Error = fmt.Sprintf("read %d records more than the topic holds", extra)
	}
	return rep
}

// requestLogEnv names a file the child writes a line to for every request
// it sends (seconds since the start, broker address, API key): for looking
// into when a client sends what.
const requestLogEnv = "BENCH_IDLE_REQUESTS"

func logRequests(w *wire.Wire, path string) (mark func(string), stop func()) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench/idle: %v\n", err)
		return func(string) {}, func() {}
	}
	var mu sync.Mutex
	start := time.Now()
	w.OnRequest = func(addr string, api int16) {
		mu.Lock()
		fmt.Fprintf(f, "%.3f %s %d\n", time.Since(start).Seconds(), addr, api)
		mu.Unlock()
	}
	mark = func(what string) {
		mu.Lock()
		fmt.Fprintf(f, "%.3f %s\n", time.Since(start).Seconds(), what)
		mu.Unlock()
	}
	return mark, func() { mu.Lock(); f.Close(); mu.Unlock() }
}

// profileEnv names a file the child writes a CPU profile of the window to,
// for looking into one run.
const profileEnv = "BENCH_IDLE_CPUPROFILE"

// traceEnv names a file the child writes an execution trace of the window to:
// at idle a CPU profile has too few samples, the trace shows every wakeup.
const traceEnv = "BENCH_IDLE_TRACE"

func profileWindow() (stop func()) {
	stopProfile := benchprofile.Start(profileEnv, traceEnv)
	return func() {
		stopProfile()
		if path := os.Getenv(heapEnv); path != "" {
			if f, err := os.Create(path); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}
}

// heapEnv names a file the child writes a heap profile to at the window's
// end: what the idle heap holds, which every garbage collection marks.
const heapEnv = "BENCH_IDLE_HEAP"

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

type gcTotals struct {
	cpu    float64
	cycles uint64
}

// gcFigures reads the collector's CPU estimate (updated as each collection
// ends) and its cycle count: the runtime forces a collection every two
// minutes, so a one-minute window holds one or none, and the two differ by
// the marking of the heap and the goroutine stacks.
func gcFigures() gcTotals {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	var t gcTotals
	if s[0].Value.Kind() == metrics.KindFloat64 {
		t.cpu = s[0].Value.Float64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		t.cycles = s[1].Value.Uint64()
	}
	return t
}

// countSockets counts the process's open sockets.
func countSockets() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n, nil
}

// statusBytes reads a "kB" line of /proc/self/status.
func statusBytes(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// Spawn runs spec in a child process (exe re-executed; exe must call
// MaybeChild first) and returns its report.
func Spawn(exe string, spec Spec) Report {
	js, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), spec.ReadLimit+spec.Settle+spec.Idle+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, resultPrefix); ok {
			var rep Report
			if jerr := json.Unmarshal([]byte(rest), &rep); jerr != nil {
				return Report{Error: fmt.Sprintf("decoding the child's report: %v", jerr)}
			}
			return rep
		}
	}
	tail := stderr.String()
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return Report{Error: fmt.Sprintf("the child printed no report (%v): %s", err, tail)}
}
