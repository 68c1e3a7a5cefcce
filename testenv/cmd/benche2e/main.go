// Command benche2e measures what toolproc costs end to end: the same
// request bodies (real tool outputs, twenty per body) sent to a fake
// upstream directly, through the Envoy stand-in alone, and through the
// stand-in with toolproc on a disabled profile and on the defaults; 2 KB,
// 300 KB and 1 MB bodies, the same body every time ("repeated") or a new
// one every time ("new"), one client or sixteen; and, turn by turn, the
// requests of a real agent session ("session": every earlier request a
// prefix of the next, most results small, as toolproc sees production
// traffic). toolproc and the stand-in run as their own processes (bin/toolproc, bin/standin), so the CPU and
// memory each uses are read from /proc. `make bench-e2e` runs it.
//
// With -load it then runs the load checks: a memory fill (new 300 KB bodies
// one after another, against the memory store's cap), many concurrent 1 MB
// exchanges, many concurrent SSE streams, and the time to first byte of a
// stream with and without toolproc.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolproc/toolproc/testenv/benchbody"
	"github.com/toolproc/toolproc/testenv/sessions"
)

type options struct {
	toolproc, standin, samples string
	session                    string
	profiles                   string
	quick, load, ttfbOnly      bool
	loadExchanges, sseStreams  int
	sseDuration                time.Duration
	fill                       int
	cells                      string
	times, rounds              int
}

func main() {
	var o options
	flag.StringVar(&o.toolproc, "toolproc", "bin/toolproc", "toolproc binary")
	flag.StringVar(&o.standin, "standin", "bin/standin", "stand-in binary")
	flag.StringVar(&o.samples, "samples", "filters/compress/testdata", "folder of the tool output samples")
	flag.BoolVar(&o.quick, "quick", false, "fewer requests per cell")
	flag.StringVar(&o.profiles, "cpuprofiles", "", "folder for CPU profiles of the stand-in (standin.pprof) and of each toolproc run (toolproc-<n>.pprof)")
	flag.BoolVar(&o.load, "load", false, "also run the load checks")
	flag.BoolVar(&o.ttfbOnly, "ttfb", false, "only measure the time to first byte of a stream: stand-in alone, toolproc disabled, toolproc defaults")
	flag.IntVar(&o.loadExchanges, "load-exchanges", 1000, "concurrent 1 MB exchanges in the load check")
	flag.IntVar(&o.sseStreams, "sse-streams", 500, "concurrent SSE streams in the load check")
	flag.DurationVar(&o.sseDuration, "sse-duration", 60*time.Second, "how long each load-check stream lasts")
	flag.IntVar(&o.fill, "fill", 1200, "new 300 KB bodies sent one after another in the memory check")
	flag.StringVar(&o.session, "session", "testenv/sessions/corpus/claude-code-daqificore.jsonl.gz", "sessions file whose OpenAI Chat requests the session cell sends, turn by turn (its provenance and licence: that folder's SOURCES.md); empty: no session cell")
	flag.StringVar(&o.cells, "cells", "", "only these cells, comma-separated: 2KB, 300KB, 300KB-new, 1MB, 1MB-new, each at c=1 and c=16, or with /1 or /16 at one of them (300KB-new/1), and session (c=1 only); all when empty")
	flag.IntVar(&o.times, "times", 1, "send this many times the requests of each cell")
	flag.IntVar(&o.rounds, "rounds", 1, "measure toolproc disabled and on the defaults this many times, alternately, each on a fresh process; the CPU table gives the totals and each round's ratio")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
}

// configs are the four columns of the table.
var configs = []string{"direct", "stand-in, no ext_proc", "+ toolproc, profile disabled", "+ toolproc defaults"}

const disabledConfig = "profiles: {default: {enabled: false}}\n"

type cell struct {
	size  int // bytes of a body (the mean, for the session cell)
	name  string
	fresh bool
	// turns: the bodies are a session's requests in order, sent once per
	// round on a fresh process, with no warm-up: each round sees the
	// session from its first turn, as toolproc would.
	turns  bool
	conc   int
	count  int
	bodies [][]byte
}

type result struct {
	p50, p99              time.Duration // of the first round
	errors                int
	toolprocCPU, standCPU time.Duration // per request, over every round
	requests              int
	// perRound is toolprocCPU in each round (-rounds), in order.
	perRound []time.Duration
}

// runOrder is the order the configurations are measured in: each once,
// then toolproc disabled and on the defaults again, alternately, until
// each has had rounds runs. Alternating puts both under the same drift of
// the machine (other processes, frequency, caches), which one run of each,
// minutes apart, does not: single runs of 120 new 300 KB bodies put the
// defaults at 4.9 to 5.9 times the disabled profile on the same build.
func runOrder(configs, rounds int) []int {
	order := make([]int, 0, configs+2*(rounds-1))
	for ci := range configs {
		order = append(order, ci)
	}
	for range rounds - 1 {
		order = append(order, configs-2, configs-1)
	}
	return order
}

// addResult records r, the cell's result on configuration ci, in rs (by
// configuration): a later round adds its requests and CPU to the first.
func addResult(rs []result, ci int, r result) []result {
	r.perRound = []time.Duration{r.toolprocCPU}
	if ci >= len(rs) {
		return append(rs, r)
	}
	a := &rs[ci]
	n := time.Duration(a.requests + r.requests)
	a.toolprocCPU = (a.toolprocCPU*time.Duration(a.requests) + r.toolprocCPU*time.Duration(r.requests)) / n
	a.standCPU = (a.standCPU*time.Duration(a.requests) + r.standCPU*time.Duration(r.requests)) / n
	a.requests += r.requests
	a.errors += r.errors
	a.perRound = append(a.perRound, r.toolprocCPU)
	return rs
}

// cellFilter reads -cells: names like the table's rows without spaces
// (2KB, 300KB, 300KB-new, 1MB, 1MB-new), each optionally at one
// concurrency (300KB-new/1). An empty list keeps every cell.
func cellFilter(list string) (func(*cell) bool, error) {
	if strings.TrimSpace(list) == "" {
		return func(*cell) bool { return true }, nil
	}
	known := map[string]bool{"2KB": true, "300KB": true, "300KB-new": true, "1MB": true, "1MB-new": true, "session": true}
	type key struct {
		name string
		conc int // 0: any
	}
	keys := map[key]bool{}
	for _, f := range strings.Split(list, ",") {
		name, conc, _ := strings.Cut(strings.TrimSpace(f), "/")
		k := key{name: name}
		if conc != "" {
			n, err := strconv.Atoi(conc)
			if err != nil || n != 1 && n != 16 {
				return nil, fmt.Errorf("-cells: %q: the concurrency is 1 or 16", f)
			}
			k.conc = n
		}
		if !known[name] {
			return nil, fmt.Errorf("-cells: unknown cell %q (2KB, 300KB, 300KB-new, 1MB, 1MB-new, session)", name)
		}
		keys[k] = true
	}
	return func(c *cell) bool {
		name := strings.ReplaceAll(c.name, " ", "")
		if c.fresh {
			name += "-new"
		}
		return keys[key{name, 0}] || keys[key{name, c.conc}]
	}, nil
}

func run(o options) error {
	bb, err := benchbody.Load(o.samples)
	if err != nil {
		return err
	}
	up, err := startUpstream()
	if err != nil {
		return err
	}
	defer up.Close()
	env, err := newEnv(o, up.URL)
	if err != nil {
		return err
	}
	defer env.Close()

	if o.ttfbOnly {
		return runTTFB(env)
	}
	scale := 1
	if o.quick {
		scale = 4
	}
	want, err := cellFilter(o.cells)
	if err != nil {
		return err
	}
	var cells []*cell
	for _, conc := range []int{1, 16} {
		for _, sz := range []struct {
			name  string
			n     int
			count int
		}{{"2 KB", 2 << 10, 400}, {"300 KB", 300 << 10, 120}, {"1 MB", 1 << 20, 48}} {
			for _, fresh := range []bool{false, true} {
				if sz.n == 2<<10 && fresh {
					continue // small bodies are never compressed: nothing to warm
				}
				c := &cell{size: sz.n, name: sz.name, fresh: fresh, conc: conc, count: max(sz.count*(1+conc/16)*o.times/scale, 1)}
				if want(c) {
					cells = append(cells, c)
				}
			}
		}
	}
	if c := (&cell{name: "session", turns: true, conc: 1}); o.session != "" && want(c) {
		if err := c.loadSession(o.session); err != nil {
			return err
		}
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		return fmt.Errorf("-cells %q names no cell", o.cells)
	}
	results := map[*cell][]result{}
	nonce := 0
	for _, ci := range runOrder(len(configs), max(o.rounds, 1)) {
		cfg := configs[ci]
		switch ci {
		case 2:
			if err := env.startToolproc(disabledConfig); err != nil {
				return err
			}
		case 3:
			if err := env.startToolproc(""); err != nil {
				return err
			}
		}
		for _, c := range cells {
			url := env.url(ci)
			if !c.turns { // the session cell's bodies are its requests, sent cold
				if err := c.build(bb, &nonce); err != nil {
					return err
				}
				// One warm-up request per cell, not counted: the repeated
				// case measures the warm path.
				if _, err := post(url, c.bodies[0]); err != nil {
					return fmt.Errorf("%s: %w", cfg, err)
				}
			}
			r := env.measure(url, c)
			results[c] = addResult(results[c], ci, r)
			fmt.Fprintf(os.Stderr, "%-30s %-7s %-8s c=%-2d p50 %8.2f ms  p99 %8.2f ms  errors %d\n", cfg, c.name, caseName(c), c.conc, ms(r.p50), ms(r.p99), r.errors)
		}
	}
	printTables(cells, results, env)
	if o.load {
		return runLoad(o, env, bb)
	}
	return nil
}

// build makes c's bodies for one round: the same body count times, or a
// new one each time (nonce numbers them across the whole run).
func (c *cell) build(bb *benchbody.Builder, nonce *int) error {
	c.bodies = c.bodies[:0]
	for i := range c.count {
		tag := "warm"
		if c.fresh {
			*nonce++
			tag = strconv.Itoa(*nonce)
		} else if i > 0 {
			c.bodies = append(c.bodies, c.bodies[0])
			continue
		}
		c.bodies = append(c.bodies, bb.Body(c.size, tag))
	}
	if len(c.bodies) == 0 {
		return fmt.Errorf("cell %s: no bodies", c.name)
	}
	return nil
}

// loadSession makes c the session cell: the OpenAI Chat requests of every
// session in file, in order.
func (c *cell) loadSession(file string) error {
	ss, err := sessions.Load(file)
	if err != nil {
		return fmt.Errorf("-session: %w", err)
	}
	total := 0
	for _, s := range ss {
		for _, b := range s.OpenAI {
			c.bodies = append(c.bodies, b)
			total += len(b)
		}
	}
	if len(c.bodies) == 0 {
		return fmt.Errorf("-session %s: no requests", file)
	}
	c.count, c.size = len(c.bodies), total/len(c.bodies)
	return nil
}

func caseName(c *cell) string {
	switch {
	case c.turns:
		return "turns"
	case c.size == 2<<10:
		return ""
	case c.fresh:
		return "new"
	}
	return "repeated"
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func printTables(cells []*cell, results map[*cell][]result, env *env) {
	for _, conc := range []int{1, 16} {
		if !slices.ContainsFunc(cells, func(c *cell) bool { return c.conc == conc }) {
			continue
		}
		fmt.Printf("\n| body, c=%d, p50 (p99) ms | %s |\n|---|---|---|---|---|\n", conc, strings.Join(configs, " | "))
		for _, c := range cells {
			if c.conc != conc {
				continue
			}
			row := c.name
			if n := caseName(c); n != "" {
				row += " (" + n + ")"
			}
			var cols []string
			for _, r := range results[c] {
				s := fmt.Sprintf("%.2f (%.2f)", ms(r.p50), ms(r.p99))
				if r.errors > 0 {
					s += fmt.Sprintf(" %d errors", r.errors)
				}
				cols = append(cols, s)
			}
			fmt.Printf("| %s | %s |\n", row, strings.Join(cols, " | "))
		}
	}
	fmt.Printf("\n| CPU per request, c=1, ms | stand-in alone | stand-in with ext_proc | toolproc disabled | toolproc defaults | defaults ÷ disabled | toolproc defaults MB/s per core |\n|---|---|---|---|---|---|---|\n")
	for _, c := range cells {
		if c.conc != 1 {
			continue
		}
		rs := results[c]
		row := c.name
		if n := caseName(c); n != "" {
			row += " (" + n + ")"
		}
		dis, def := rs[2].toolprocCPU, rs[3].toolprocCPU
		ratio := "—"
		if dis > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(def)/float64(dis))
			if lo, hi, ok := roundRatios(rs[2].perRound, rs[3].perRound); ok {
				ratio += fmt.Sprintf(" (rounds %.2f–%.2f×)", lo, hi)
			}
		}
		mbs := "—"
		if def > 0 {
			mbs = fmt.Sprintf("%.0f", float64(c.size)/1e6/def.Seconds())
		}
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", row, ms(rs[1].standCPU), ms(rs[3].standCPU), ms(dis), ms(def), ratio, mbs)
	}
	fmt.Printf("\nCPU is read from /proc over each cell's requests (the threads' schedstat run time in ns; user+system in 10 ms ticks where the kernel has no schedstat). toolproc peak RSS (VmHWM) over the table: %s.\n", mib(env.toolprocHWM()))
	if r := env.o.rounds; r > 1 {
		fmt.Printf("Toolproc disabled and on the defaults were measured %d times each, alternately, each time on a fresh process: their columns are the totals over the rounds.\n", r)
	}
}

// roundRatios returns the lowest and highest ratio of defaults to
// disabled over the rounds, when there was more than one.
func roundRatios(dis, def []time.Duration) (lo, hi float64, ok bool) {
	if len(dis) < 2 || len(dis) != len(def) {
		return 0, 0, false
	}
	for k := range dis {
		if dis[k] <= 0 {
			return 0, 0, false
		}
		r := float64(def[k]) / float64(dis[k])
		if !ok || r < lo {
			lo = r
		}
		if !ok || r > hi {
			hi = r
		}
		ok = true
	}
	return lo, hi, ok
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// ---------------------------------------------------------------------------
// The processes.

type env struct {
	o                           options
	upstream                    string
	listen, replay, grpc, admin string
	standin, toolproc           *exec.Cmd
	dir                         string
	hwm                         int64
	runs                        int
}

func newEnv(o options, upstream string) (*env, error) {
	dir, err := os.MkdirTemp("", "benche2e")
	if err != nil {
		return nil, err
	}
	e := &env{o: o, upstream: upstream, dir: dir}
	e.listen, e.replay, e.grpc, e.admin = freeAddr(), freeAddr(), freeAddr(), freeAddr()
	args := []string{"-listen", e.listen, "-replay-listen", e.replay, "-extproc", e.grpc,
		"-upstream", upstream, "-response-body-mode", "FULL_DUPLEX_STREAMED", "-xml-profile", "",
		// envoy/envoy.yaml's message_timeout: under the load check a body waits its turn for a core.
		"-message-timeout", "30s"}
	if o.profiles != "" {
		args = append(args, "-cpuprofile", filepath.Join(o.profiles, "standin.pprof"))
	}
	e.standin = exec.Command(o.standin, args...)
	e.standin.Stderr = io.Discard
	if err := e.standin.Start(); err != nil {
		return nil, err
	}
	if err := waitTCP(e.listen); err != nil {
		return nil, fmt.Errorf("stand-in: %w", err)
	}
	return e, nil
}

// startToolproc (re)starts toolproc with config over the defaults, quiet.
func (e *env) startToolproc(config string) error {
	e.stopToolproc()
	file := filepath.Join(e.dir, "config.yaml")
	full := fmt.Sprintf("server: {grpc_addr: %q, admin_addr: %q, replay_url: %q}\nlog: {level: warn}\n%s", e.grpc, e.admin, "http://"+e.replay, config)
	if err := os.WriteFile(file, []byte(full), 0o600); err != nil {
		return err
	}
	args := []string{"serve", "--config", file}
	if e.o.profiles != "" {
		e.runs++
		args = append(args, "--cpuprofile", filepath.Join(e.o.profiles, fmt.Sprintf("toolproc-%d.pprof", e.runs)))
	}
	e.toolproc = exec.Command(e.o.toolproc, args...)
	e.toolproc.Stderr = io.Discard
	if err := e.toolproc.Start(); err != nil {
		return err
	}
	return waitTCP(e.grpc)
}

func (e *env) stopToolproc() {
	if e.toolproc == nil {
		return
	}
	e.hwm = max(e.hwm, procStatus(e.toolproc.Process.Pid, "VmHWM"))
	_ = e.toolproc.Process.Signal(os.Interrupt)
	_ = e.toolproc.Wait()
	e.toolproc = nil
}

func (e *env) toolprocHWM() int64 {
	if e.toolproc != nil {
		return max(e.hwm, procStatus(e.toolproc.Process.Pid, "VmHWM"))
	}
	return e.hwm
}

func (e *env) Close() {
	e.stopToolproc()
	if e.standin != nil {
		_ = e.standin.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = e.standin.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = e.standin.Process.Kill()
		}
	}
	_ = os.RemoveAll(e.dir)
}

// url is where a column's requests go.
func (e *env) url(config int) string {
	const path = "/v1/chat/completions"
	switch config {
	case 0:
		return e.upstream + path
	case 1:
		return "http://" + e.replay + path
	}
	return "http://" + e.listen + path
}

// measure sends the cell's bodies with c.conc clients and reads the CPU
// the two processes used meanwhile.
func (e *env) measure(url string, c *cell) result {
	tp0, sp0 := e.cpu()
	lat := make([]time.Duration, len(c.bodies))
	var errs atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(c.bodies) {
					return
				}
				d, err := post(url, c.bodies[i])
				if err != nil {
					errs.Add(1)
				}
				lat[i] = d
			}
		}()
	}
	wg.Wait()
	tp1, sp1 := e.cpu()
	n := time.Duration(len(c.bodies))
	r := result{errors: int(errs.Load()), requests: len(c.bodies), toolprocCPU: (tp1 - tp0) / n, standCPU: (sp1 - sp0) / n}
	r.p50, r.p99 = percentiles(lat)
	return r
}

// cpu returns the CPU time toolproc and the stand-in used so far.
func (e *env) cpu() (toolproc, standin time.Duration) {
	if e.toolproc != nil {
		toolproc = procCPU(e.toolproc.Process.Pid)
	}
	return toolproc, procCPU(e.standin.Process.Pid)
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0}, Timeout: 5 * time.Minute}

// post sends one request and reads the whole answer.
func post(url string, body []byte) (time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("authorization", "Bearer sk-bench")
	resp, err := client.Do(req)
	if err != nil {
		return time.Since(start), err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return d, err
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// procCPU is the CPU time process pid has used: the sum over its threads
// of /proc/<pid>/task/<tid>/schedstat's first field, nanoseconds on a CPU
// (proc(5)), where the kernel keeps it; else user+system time from
// /proc/<pid>/stat, counted in 10 ms ticks, which on a cell of a few
// hundred requests of a few milliseconds each moves a ratio by a third.
// A thread that has exited leaves the schedstat sum; Go's runtime keeps
// its threads, and the benchmark reads the sum before and after each cell.
func procCPU(pid int) time.Duration {
	if d, ok := schedCPU(pid); ok {
		return d
	}
	return statCPU(pid)
}

func schedCPU(pid int) (time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread has just exited
		}
		f := strings.Fields(string(raw))
		if len(f) < 1 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += ns
	}
	return time.Duration(sum), true
}

func statCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; fields count from after ')'.
	s := string(raw)
	s = s[strings.LastIndexByte(s, ')')+2:]
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procStatus reads a kB field of /proc/<pid>/status, in bytes.
func procStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitTCP(addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New(addr + " did not come up")
}

// ---------------------------------------------------------------------------
// The fake upstream.

type upstream struct {
	URL string
	srv *http.Server
}

func (u *upstream) Close() { _ = u.srv.Close() }

// SSEHeader asks the fake upstream for a stream of that many events: the
// first at once, then one every 50 ms.
const SSEHeader = "x-bench-sse-events"

func startUpstream() (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	answer := []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n, _ := strconv.Atoi(r.Header.Get(SSEHeader))
		if n <= 0 {
			w.Header().Set("content-type", "application/json")
			_, _ = w.Write(answer)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		fl, _ := w.(http.Flusher)
		for i := range n {
			if i > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d \"},\"finish_reason\":null}]}\n\n", i)
			if fl != nil {
				fl.Flush()
			}
		}
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &upstream{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// ---------------------------------------------------------------------------
// The load checks.

func runLoad(o options, e *env, bb *benchbody.Builder) error {
	fmt.Printf("\n## Load checks (toolproc defaults, through the stand-in)\n\n")
	if err := e.startToolproc(""); err != nil {
		return err
	}
	pid := e.toolproc.Process.Pid
	url := e.url(3)

	// Memory: new 300 KB bodies one after another fill the memory store.
	start := time.Now()
	var lat []time.Duration
	errs := 0
	for i := range o.fill {
		d, err := post(url, bb.Body(300<<10, "fill"+strconv.Itoa(i)))
		if err != nil {
			errs++
		}
		lat = append(lat, d)
	}
	p50, p99 := percentiles(lat)
	hwm, rss := procStatus(pid, "VmHWM"), procStatus(pid, "VmRSS")
	time.Sleep(10 * time.Second)
	idle := procStatus(pid, "VmRSS")
	fmt.Printf("- memory fill: %d new 300 KB requests at c=1 in %s, p50 %.2f ms, p99 %.2f ms, %d errors; toolproc peak RSS %s, RSS at the end %s, after 10 s idle %s (memory store cap 256 MiB)\n",
		o.fill, time.Since(start).Round(time.Second), ms(p50), ms(p99), errs, mib(hwm), mib(rss), mib(idle))

	// Concurrency: many 1 MB exchanges at once.
	before := goroutines(e.admin)
	bodies := make([][]byte, 50)
	for i := range bodies {
		bodies[i] = bb.Body(1<<20, "load"+strconv.Itoa(i))
	}
	c := &cell{conc: o.loadExchanges}
	for i := range o.loadExchanges {
		c.bodies = append(c.bodies, bodies[i%len(bodies)])
	}
	start = time.Now()
	r := e.measure(url, c)
	took := time.Since(start)
	time.Sleep(3 * time.Second)
	after := goroutines(e.admin)
	fmt.Printf("- %d concurrent 1 MB exchanges: %d errors, all done in %s, p50 %.0f ms, p99 %.0f ms; toolproc peak RSS %s; goroutines %d before, %d after\n",
		o.loadExchanges, r.errors, took.Round(time.Millisecond), ms(r.p50), ms(r.p99), mib(procStatus(pid, "VmHWM")), before, after)

	// Time to first byte of a stream, with and without toolproc.
	small := []byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	ttfb := func(url string, n int) (time.Duration, time.Duration) {
		var ds []time.Duration
		for range n {
			d, _, _ := stream(url, small, 3)
			ds = append(ds, d)
		}
		return percentiles(ds)
	}
	a50, a99 := ttfb(e.url(1), 200)
	b50, b99 := ttfb(url, 200)
	fmt.Printf("- time to first byte of a stream (FULL_DUPLEX_STREAMED, 200 streams one after another): stand-in alone p50 %.3f ms (p99 %.3f), with toolproc p50 %.3f ms (p99 %.3f): toolproc adds %.3f ms at p50\n",
		ms(a50), ms(a99), ms(b50), ms(b99), ms(b50-a50))

	// Many long streams at once.
	events := int(o.sseDuration / (50 * time.Millisecond))
	var wg sync.WaitGroup
	var serr, short atomic.Int64
	firsts := make([]time.Duration, o.sseStreams)
	before = goroutines(e.admin)
	start = time.Now()
	cpu0 := procCPU(pid)
	var peakRSS atomic.Int64
	sampling := make(chan struct{})
	go func() {
		for {
			peakRSS.Store(max(peakRSS.Load(), procStatus(pid, "VmRSS")))
			select {
			case <-sampling:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	for i := range o.sseStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, got, err := stream(url, small, events)
			firsts[i] = d
			if err != nil {
				serr.Add(1)
			} else if got < events {
				short.Add(1)
			}
		}()
	}
	wg.Wait()
	took = time.Since(start)
	cpu := procCPU(pid) - cpu0
	close(sampling)
	time.Sleep(3 * time.Second)
	f50, f99 := percentiles(firsts)
	fmt.Printf("- %d concurrent SSE streams of %d events (one per 50 ms, %s): %d errors, %d short, done in %s; first byte p50 %.2f ms, p99 %.2f ms; toolproc RSS at most %s while streaming, CPU %.0f%% of a core (%.1f µs per event); goroutines %d before, %d after\n",
		o.sseStreams, events, o.sseDuration, serr.Load(), short.Load(), took.Round(time.Second), ms(f50), ms(f99), mib(peakRSS.Load()),
		100*cpu.Seconds()/took.Seconds(), float64(cpu.Microseconds())/float64(o.sseStreams*events), before, goroutines(e.admin))
	return nil
}

// runTTFB measures the time to the first byte of a short stream through
// the stand-in alone and with toolproc on each profile, 500 streams one
// after another each.
func runTTFB(e *env) error {
	small := []byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	ttfb := func(url string) (time.Duration, time.Duration) {
		var ds []time.Duration
		for range 500 {
			d, _, _ := stream(url, small, 2)
			ds = append(ds, d)
		}
		return percentiles(ds)
	}
	a50, a99 := ttfb(e.url(1))
	fmt.Printf("| time to first byte, p50 (p99) ms | stand-in alone | + toolproc disabled | + toolproc defaults |\n|---|---|---|---|\n")
	row := fmt.Sprintf("| FULL_DUPLEX_STREAMED, 500 streams | %.3f (%.3f)", ms(a50), ms(a99))
	for _, cfg := range []string{disabledConfig, ""} {
		if err := e.startToolproc(cfg); err != nil {
			return err
		}
		ttfb(e.url(3)) // warm the connection
		b50, b99 := ttfb(e.url(3))
		row += fmt.Sprintf(" | %.3f (%.3f)", ms(b50), ms(b99))
	}
	fmt.Println(row + " |")
	return nil
}

// stream posts a streaming request asking for n events and reads it all:
// the time to the first body byte, and how many events came.
func stream(url string, body []byte, n int) (time.Duration, int, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set(SSEHeader, strconv.Itoa(n))
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.Peek(1); err != nil {
		return time.Since(start), 0, err
	}
	first := time.Since(start)
	got := 0
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data: {") && strings.Contains(line, "token ") {
			got++
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return first, got, err
		}
	}
}

// goroutines reads go_goroutines from toolproc's /metrics.
func goroutines(admin string) int {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}
