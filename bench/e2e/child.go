package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	benchprofile "github.com/rackfetch/kafka-go/bench/profile"
)

// childEnv names the environment variable that turns a process into a
// child: it holds the Spec as JSON.
const childEnv = "BENCH_E2E_CHILD"

// resultPrefix starts the child's one line of output the parent reads.
const resultPrefix = "BENCH_E2E_RESULT "

// Report is what the child prints: what it read and when.
type Report struct {
	Sum   Sum           `json:"sum"`
	First time.Duration `json:"first"` // start to first record
	Last  time.Duration `json:"last"`  // start to last record (not closing)
	// Middle is the time from a tenth of the records read to nine tenths,
	// and MiddleRecords how many were read in it (counter.tick); Tenth is
	// the start to a tenth (what is left of Last is the last tenth).
	Tenth         time.Duration `json:"tenth"`
	Middle        time.Duration `json:"middle"`
	MiddleRecords int64         `json:"middle_records"`
	// Sockets is the most sockets the child saw open itself when its
	// first and last consumer finished reading.
	Sockets int `json:"sockets"`
	// PeakRSS is the child's VmHWM in bytes when it finished (before
	// printing this report).
	PeakRSS int64  `json:"peak_rss"`
	Error   string `json:"error,omitempty"`
}

// MaybeChild runs the child's consume and exits when the process was
// started as a child (by Spawn); otherwise it returns at once. Call it first
// in main or TestMain.
func MaybeChild() {
	js, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	var spec Spec
	rep := Report{}
	stop := profile()
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		rep.Error = fmt.Sprintf("decoding the spec: %v", err)
	} else {
		rep = Consume(spec)
	}
	stop()
	out, _ := json.Marshal(rep)
	fmt.Printf("%s%s\n", resultPrefix, out)
	os.Exit(0)
}

// profileEnv and traceEnv name files a child writes its CPU profile and
// execution trace to, for looking into one run (run the child by hand:
// BENCH_E2E_CHILD='<spec as JSON>' BENCH_E2E_CPUPROFILE=cpu.out go run ./cmd/e2e).
const (
	profileEnv = "BENCH_E2E_CPUPROFILE"
	traceEnv   = "BENCH_E2E_TRACE"
)

// profile starts what the environment asks for; the function it returns
// stops it.
func profile() (stop func()) { return benchprofile.Start(profileEnv, traceEnv) }

// Consume reads spec's records in this process.
func Consume(spec Spec) Report {
	f := consumers[spec.Client][spec.Mode]
	if f == nil {
		return Report{Error: fmt.Sprintf("no client %q in mode %q", spec.Client, spec.Mode)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
	defer cancel()
	c := &counter{spec: spec, start: time.Now()}
	err := f(ctx, c)
	rep := Report{Sum: c.sum, Last: c.last, Sockets: c.sockets}
	if rep.Last == 0 {
		rep.Last = time.Since(c.start)
	}
	rep.PeakRSS, _ = vmHWM("/proc/self/status")
	if first := c.first.Load(); first > 0 {
		rep.First = time.Duration(first - 1)
	}
	if a, b := c.at10.Load(), c.at90.Load(); a > 0 && b > a {
		rep.Tenth, rep.Middle = time.Duration(a-1), time.Duration(b-a)
		rep.MiddleRecords = c.passed90.Load() - c.passed10.Load()
	}
	if err != nil {
		rep.Error = err.Error()
	}
	return rep
}

// Run is the parent's record of one child: the spec, the child's report
// and what the parent measured of the child process.
type Run struct {
	Spec
	Round     int     `json:"round"`
	Report    Report  `json:"report"`
	CPU       float64 `json:"cpu_s"`          // user+sys seconds of the child
	MaxRSS    int64   `json:"max_rss"`        // bytes: the child's VmHWM (see Spawn)
	RusageRSS int64   `json:"rusage_max_rss"` // bytes: ru_maxrss, which is not the child's own (see Spawn)
	Sockets   int     `json:"max_sockets"`    // most sockets open at one sample (the parent's every 50 ms, the child's own two)
	Wall      float64 `json:"wall_s"`         // child start to exit
	Load1     float64 `json:"load1"`          // the machine's 1-minute load average when the child started
	Error     string  `json:"error,omitempty"`
	Expected  Sum     `json:"expected"`
}

// OK reports whether the child read exactly the expected records.
func (r *Run) OK() bool { return r.Error == "" && r.Report.Sum == r.Expected }

// RecordsPerSec is records over the time from the consumer's creation to
// its last record (what a user waits for, connecting and joining included).
func (r *Run) RecordsPerSec() float64 {
	return float64(r.Report.Sum.Records) / r.Report.Last.Seconds()
}

// MiddlePerSec is the rate from a tenth of the records read to nine
// tenths: the rate once every client reads at full speed, without the start
// (connecting, joining, the first fetch) and the end, which are a large part
// of a run of a second. Not from the first record: a client that hands out
// its first fetch's first partition before the others arrive (this Reader,
// after about 10 MB) starts that clock 50–160 MB earlier than one that hands
// out whole fetches (franz-go), and looked slower by it.
func (r *Run) MiddlePerSec() float64 {
	if r.Report.MiddleRecords <= 0 || r.Report.Middle <= 0 {
		return r.RecordsPerSec()
	}
	return float64(r.Report.MiddleRecords) / r.Report.Middle.Seconds()
}

// CPUPerGB is the child's CPU seconds per GB (1e9 bytes) of keys and values
// read.
func (r *Run) CPUPerGB() float64 {
	return r.CPU / (float64(r.Report.Sum.Bytes) / 1e9)
}

// Spawn runs spec in a child process (exe re-executed with the spec in its
// environment; exe must call MaybeChild first), samples its open sockets
// and peak RSS every 50 ms, and returns the run. A child that does not
// finish within spec.Timeout plus a minute is killed.
//
// CPU time is the child's rusage (user+sys). Peak RSS is the child's VmHWM
// from /proc (its own report at the end, or the parent's last sample), not
// ru_maxrss: Go starts children with vfork (CLONE_VM), and Linux carries the
// parent's peak RSS into the child's ru_maxrss at exec, so ru_maxrss is never
// below the parent's.
func Spawn(exe string, spec Spec, expected Sum) Run {
	run := Run{Spec: spec, Expected: expected}
	js, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	run.Load1 = load1()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		run.Error = fmt.Sprintf("starting the child: %v", err)
		return run
	}
	stop := make(chan struct{})
	peak := make(chan [2]int64, 1)
	go func() {
		socks, rss := sample(cmd.Process.Pid, stop)
		peak <- [2]int64{int64(socks), rss}
	}()
	werr := cmd.Wait()
	run.Wall = time.Since(start).Seconds()
	close(stop)
	p := <-peak
	run.Sockets, run.MaxRSS = int(p[0]), p[1]
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.CPU = tv(ru.Utime) + tv(ru.Stime)
		run.RusageRSS = ru.Maxrss << 10 // KiB on Linux
	}
	found := false
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			found = json.Unmarshal([]byte(line), &run.Report) == nil
		}
	}
	run.Sockets = max(run.Sockets, run.Report.Sockets)
	run.MaxRSS = max(run.MaxRSS, run.Report.PeakRSS)
	switch {
	case werr != nil:
		run.Error = fmt.Sprintf("child: %v: %s", werr, tail(stderr.String()))
	case !found:
		run.Error = fmt.Sprintf("child printed no result: %s", tail(stderr.String()))
	case run.Report.Error != "":
		run.Error = run.Report.Error
	case run.Report.Sum != expected:
		run.Error = fmt.Sprintf("read %+v, want %+v", run.Report.Sum, expected)
	}
	return run
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func tail(s string) string {
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}

// sample counts the sockets among pid's open files and reads its VmHWM
// every 50 ms until stop is closed, and returns the most sockets seen at
// once and the last VmHWM read.
func sample(pid int, stop <-chan struct{}) (sockets int, rss int64) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	status := fmt.Sprintf("/proc/%d/status", pid)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if n, err := countSockets(dir); err == nil {
			sockets = max(sockets, n)
		}
		if n, err := vmHWM(status); err == nil {
			rss = max(rss, n)
		}
		select {
		case <-stop:
			return sockets, rss
		case <-t.C:
		}
	}
}

// vmHWM reads the peak resident set size from a /proc status file.
func vmHWM(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmHWM of %s: %w", path, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in %s", path)
}

func countSockets(dir string) (int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if l, err := os.Readlink(dir + "/" + name); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	if len(names) == 0 {
		return 0, errors.New("no open files")
	}
	return n, nil
}

// load1 is the 1-minute load average (0 when /proc/loadavg cannot be read).
func load1() float64 {
	f := strings.Fields(LoadAverage())
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// LoadAverage is the machine's 1, 5 and 15-minute load averages, "?" when
// /proc/loadavg cannot be read.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
