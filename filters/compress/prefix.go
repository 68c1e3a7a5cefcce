package compress

import (
	"iter"
	"strings"
)

// linePrefix is the kind of prefix a tool puts before every line of the
// output it relays, which the classifiers read without: a test run's "(fail)
// cart > sums" is a failing test whatever package's run printed it.
type linePrefix uint8

const (
	noPrefix linePrefix = iota
	// ciPrefix: a CI job's log (ciLogPrefix).
	ciPrefix
	// taskPrefix: a workspace runner's or a container's name (taskPrefixLen).
	taskPrefix
	// syslogPrefix: journalctl's or a syslog file's time, host and
	// program (syslogPrefixLen).
	syslogPrefix
	// clockPrefix: a bare time of day (clockPrefixLen).
	clockPrefix
	// buildkitPrefix: docker build's plain progress (buildkitPrefixLen).
	buildkitPrefix

	// numberedPrefix, with a kind, says the prefix follows a read's line
	// number ("    12→2026-07-14T14:03:52.0047503Z FAILED …"): a CI job's
	// or a container's log saved to a file and opened with Claude Code's
	// Read or `cat -n`. Its cut takes the number with the prefix.
	numberedPrefix linePrefix = 0x80
)

// kind is f without numberedPrefix.
func (f linePrefix) kind() linePrefix { return f &^ numberedPrefix }

// prefixOf reads the first lines of text for the prefix its lines carry.
// One pass over them answers every kind's test (headPrefixes): each
// classifier's caller asks, and five passes over the same forty lines were
// 2 % of a new request's CPU (issue 23).
func prefixOf(text string) linePrefix {
	h := headPrefixesOf(text)
	if h.numbered {
		return h.kind() | numberedPrefix
	}
	return h.kind()
}

// kind is the prefix h's counts say the lines carry.
func (h headPrefixes) kind() linePrefix {
	switch {
	case h.ci():
		return ciPrefix
	case h.task.is():
		return taskPrefix
	case h.most(h.syslog):
		return syslogPrefix
	case h.most(h.clock):
		return clockPrefix
	case h.most(h.buildkit):
		return buildkitPrefix
	}
	return noPrefix
}

// headPrefixes counts, among text's first taskLogLines lines, the
// non-blank ones and those that carry each kind of prefix. A line a read
// numbered is read after its number (readNumber).
type headPrefixes struct {
	lines                           int // non-blank
	ciLine, syslog, clock, buildkit int
	ciEarly                         bool // one of the first two lines, blank or not, carries a CI prefix
	task                            taskRun
	numbered                        bool // the prefixes were found after read numbers
}

// readNumber is the length of the number Claude Code's Read ("    12→")
// or `cat -n` ("    12\t") puts before line l, or 0. SWE-agent's "12:" is
// not read so: a clock's "10:00:00" would be taken for one.
func readNumber(l string) int {
	switch st, _ := numberAndCode(l, numNone); st {
	case numArrow, numTab:
		return len(l) - len(stripNumber(l, st))
	}
	return 0
}

// headPrefixesOf reads text's first lines: as they stand, and when most of
// them carry a read's number and none of the kinds of prefix, after it.
func headPrefixesOf(text string) headPrefixes {
	h := headPrefixesAfter(text, false)
	if h.kind() != noPrefix || !h.mostNumbered {
		return h.headPrefixes
	}
	n := headPrefixesAfter(text, true)
	n.numbered = n.kind() != noPrefix
	if !n.numbered {
		return h.headPrefixes
	}
	return n.headPrefixes
}

// headCount is headPrefixes with whether three in five of the non-blank
// lines carry a read's number.
type headCount struct {
	headPrefixes
	mostNumbered bool
}

// headPrefixesAfter counts the first lines' prefixes, each line read after
// its read number when afterNumber says so.
func headPrefixesAfter(text string, afterNumber bool) headCount {
	var h headCount
	k, numbered := 0, 0
	for l := range headLines(text, taskLogLines) {
		if n := readNumber(l); n > 0 {
			numbered++
			if afterNumber {
				l = l[n:]
			}
		}
		c := ciLogPrefix(l)
		if k < 2 && c > 0 {
			// The rest cannot change prefixOf's answer.
			h.ciEarly = true
			return h
		}
		k++
		h.task.add(l)
		if isBlank(l) {
			continue
		}
		h.lines++
		if c > 0 {
			h.ciLine++
		}
		if syslogPrefixLen(l) > 0 {
			h.syslog++
		}
		if clockPrefixLen(l) > 0 {
			h.clock++
		}
		if buildkitPrefixLen(l) > 0 {
			h.buildkit++
		}
	}
	h.mostNumbered = numbered > 0 && numbered*5 >= h.lines*3
	return h
}

// most reports whether n lines are three or more, and three in five, of
// the non-blank ones.
func (h headPrefixes) most(n int) bool { return n >= 3 && n*5 >= h.lines*3 }

// ci reports whether the lines read as a CI job's log: one of the first
// two opens with a timestamp prefix (ciLogPrefix), as the part read from the
// middle of a long output may start inside a line; or most of them do, as
// when a harness's header comes first (Codex's "Chunk ID: …", "Wall time:
// …", "Output:" before `gh run view --log`).
func (h headPrefixes) ci() bool { return h.ciEarly || h.most(h.ciLine) }

// cut is the length of line l's prefix of kind f, or 0 when l has none;
// with numberedPrefix, of the read's number and the prefix after it, or 0
// when no prefix follows the number.
func (f linePrefix) cut(l string) int {
	if f&numberedPrefix != 0 {
		if n := readNumber(l); n > 0 {
			if c := f.kind().cut(l[n:]); c > 0 {
				return n + c
			}
			return 0
		}
		f = f.kind()
	}
	switch f {
	case ciPrefix:
		return ciLogPrefix(l)
	case taskPrefix:
		return taskPrefixLen(l)
	case syslogPrefix:
		return syslogPrefixLen(l)
	case clockPrefix:
		return clockPrefixLen(l)
	case buildkitPrefix:
		return buildkitPrefixLen(l)
	}
	return 0
}

// buildkitPrefixLen is the length of the prefix BuildKit's plain progress
// output (docker build --progress=plain, the form it takes when its output
// is not a terminal, as an agent's shell's is not) puts before a line, or
// 0: the step's number, and for the lines a step's command printed, the
// seconds since the step began, "#12 3.210 ". A step's own lines ("#12
// [3/7] RUN pytest", "#12 DONE 4.1s") carry the number alone. What
// follows is the command's own line: a test run inside a RUN step.
func buildkitPrefixLen(l string) int {
	if len(l) < 3 || l[0] != '#' {
		return 0
	}
	d := digits(l[1:])
	if d == 0 || d > 5 || 1+d >= len(l) || l[1+d] != ' ' {
		return 0
	}
	n := 2 + d
	// The seconds: digits, a point and three decimals.
	s := digits(l[n:])
	if s == 0 || s > 6 || n+s+4 > len(l) || l[n+s] != '.' || digits(l[n+s+1:]) != 3 {
		return n
	}
	n += s + 4
	switch {
	case n == len(l):
		return n
	case l[n] == ' ':
		return n + 1
	}
	return 2 + d
}

// clockPrefixLen is the length of a bare time of day before a line, or 0:
// "10:00:00 " or "[10:00:00] ", with a fraction or not, as Jenkins'
// Timestamper plugin, gulp and many build tools print it before each line
// they relay. What follows is the tool's own line.
func clockPrefixLen(l string) int {
	i := 0
	if l != "" && l[0] == '[' {
		i = 1
	}
	if !isClock(l[i:]) {
		return 0
	}
	n := i + len("hh:mm:ss")
	n += fractionLen(l[n:])
	if i == 1 {
		if n >= len(l) || l[n] != ']' {
			return 0
		}
		n++
	}
	switch {
	case n == len(l):
		return n
	case l[n] == ' ':
		return n + 1
	}
	return 0
}

// syslogPrefixLen is the length of the prefix journalctl and syslog files
// put before a program's line, or 0: the time in journalctl's default
// form ("Nov 28 10:00:00", with a fraction in its short-precise form) or
// in its short-iso form ("2024-11-28T10:00:00+0000"), the host, and the
// program with its pid and a colon ("app[4242]: ", "kernel: "), as
// journalctl(1) describes its output modes. What follows is the
// program's own line, which the classifiers read without it.
//
// Heroku's log stream (`heroku logs`) has the same shape without the host:
// an ISO time, then the source and the dyno, "app[web.1]: ".
func syslogPrefixLen(l string) int {
	n := syslogTime(l)
	if n == 0 || n >= len(l) || l[n] != ' ' {
		return 0
	}
	if p := programPrefixEnd(l, n+1, true); p > 0 {
		return p // Heroku's: no host
	}
	// The host: one word.
	h := n + 1
	e := h
	for e < len(l) && e-h < 128 && l[e] != ' ' && l[e] != ':' {
		e++
	}
	if e == h || e >= len(l) || l[e] != ' ' {
		return 0
	}
	return programPrefixEnd(l, e+1, false)
}

// programPrefixEnd reads, at l[p:], the program a syslog line names
// ("systemd[1]", "kernel", "app.service") and the ": " after it, and
// returns where the prefix ends, or 0. In brackets is the program's pid,
// or with dyno Heroku's dyno ("app[web.1]", "heroku[router]").
func programPrefixEnd(l string, p int, dyno bool) int {
	q := p
	for q < len(l) && q-p < 128 && (isTaskNameByte(l[q]) || l[q] == '(' || l[q] == ')') {
		q++
	}
	if q == p {
		return 0
	}
	if q < len(l) && l[q] == '[' {
		d := q + 1
		for d < len(l) && d-q <= 64 && (isDigit(l[d]) || dyno && isTaskNameByte(l[d])) {
			d++
		}
		if d == q+1 || d >= len(l) || l[d] != ']' {
			return 0
		}
		q = d + 1
	}
	if q >= len(l) || l[q] != ':' {
		return 0
	}
	if q+1 == len(l) {
		return q + 1
	}
	if l[q+1] != ' ' {
		return 0
	}
	return q + 2
}

// syslogTime is the length of the time a syslog line starts with, or 0:
// "Nov 28 10:00:00" (the day may be space-padded: "Nov  8"), with an
// optional fraction, or an ISO 8601 time with a numeric offset or Z.
func syslogTime(l string) int {
	if len(l) >= 15 && isLetter(l[0]) && isLetter(l[1]) && isLetter(l[2]) && l[3] == ' ' {
		if m := strings.Index("JanFebMarAprMayJunJulAugSepOctNovDec", l[:3]); m < 0 || m%3 != 0 {
			return 0
		}
		i := 4
		if l[i] == ' ' {
			i++
		}
		d := digits(l[i:])
		if d == 0 || d > 2 || i+d >= len(l) || l[i+d] != ' ' {
			return 0
		}
		i += d + 1
		if !isClock(l[i:]) {
			return 0
		}
		i += len("hh:mm:ss")
		return i + fractionLen(l[i:])
	}
	// short-iso: 2024-11-28T10:00:00+0000, 2024-11-28T10:00:00.123456+00:00
	i := isoDateTime(l)
	switch {
	case i == 0:
		return 0
	case i < len(l) && l[i] == 'Z':
		return i + 1
	case i < len(l) && (l[i] == '+' || l[i] == '-'):
		d := digits(l[i+1:])
		if d == 4 {
			return i + 5
		}
		if d == 2 && i+5 < len(l) && l[i+3] == ':' && digits(l[i+4:]) == 2 {
			return i + 6
		}
	}
	return 0
}

// isClock reports whether s starts with "hh:mm:ss".
func isClock(s string) bool {
	return len(s) >= 8 && isDigit(s[0]) && isDigit(s[1]) && s[2] == ':' && isDigit(s[3]) && isDigit(s[4]) && s[5] == ':' && isDigit(s[6]) && isDigit(s[7])
}

// taskLogLines is how many of an output's first lines isTaskLog reads.
const taskLogLines = 40

// headLines yields text's first n lines, without their line breaks.
func headLines(text string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := 0; k < n && text != ""; k++ {
			l := text
			if i := strings.IndexByte(text, '\n'); i >= 0 {
				l, text = text[:i], text[i+1:]
			} else {
				text = ""
			}
			if !yield(l) {
				return
			}
		}
	}
}

// taskRun counts, over the lines it has read, those that carry a task
// prefix (taskPrefixLen) and the longest run of one task: most of the first
// lines carry one, one of them on three lines at least, in a workspace run,
// and a prose line that happens to open with "Note that: " is not a run.
type taskRun struct {
	lines, prefixed, best, run int
	last                       string
}

func (r *taskRun) add(l string) {
	if strings.IndexByte(l, 0x1b) >= 0 {
		l = stripANSI(l) // turbo colours each package's prefix
	}
	if isBlank(l) {
		return
	}
	r.lines++
	n := taskPrefixLen(l)
	if n == 0 {
		return
	}
	r.prefixed++
	// The same prefix again (compose pads names to one width, so the
	// spaces are dropped first): counted as a run of one task.
	p := strings.TrimRight(l[:n], " |:")
	if p == r.last {
		r.run++
	} else {
		r.last, r.run = p, 1
	}
	r.best = max(r.best, r.run)
}

func (r *taskRun) is() bool { return r.best >= 3 && r.prefixed*5 >= r.lines*3 }

// taskPrefixLen is the length of the prefix a workspace runner or a
// container log puts before each line it relays, or 0:
//
//   - pnpm -r, bun --filter, yarn workspaces: "@scope/pkg test: ", "apps/web build: "
//   - turbo: "@scope/pkg:test: ", "web:build: "
//   - docker compose up and logs: "app-1  | ", "db_1 | "
//   - kubectl logs --prefix: "[pod/web-1/app] "
//
// The name holds a letter (a code frame's "19 | " is not a container), and a
// container's ends in its replica number, as compose names them.
func taskPrefixLen(l string) int {
	if strings.HasPrefix(l, "[pod/") {
		// kubectl logs --prefix: "[pod/web-1/app] ".
		e := strings.Index(l, "] ")
		if e < 0 || e > 256 || strings.Count(l[:e], "/") != 2 {
			return 0
		}
		return e + 2
	}
	i, letter := 0, false
	for i < len(l) && i < 128 && isTaskNameByte(l[i]) {
		letter = letter || isLetter(l[i])
		i++
	}
	if i == 0 || i >= len(l) || !letter {
		return 0
	}
	name := l[:i]
	switch l[i] {
	case ' ':
		j := i
		for j < len(l) && l[j] == ' ' {
			j++
		}
		if j < len(l) && l[j] == '|' && (j+1 == len(l) || l[j+1] == ' ') {
			if !hasReplicaNumber(name) {
				return 0
			}
			return min(j+2, len(l))
		}
		if j != i+1 || strings.IndexByte(name, ':') >= 0 {
			return 0
		}
		return scriptEnd(l, j)
	case ':':
		if strings.IndexByte(name, ':') >= 0 {
			return 0
		}
		return scriptEnd(l, i+1)
	}
	return 0
}

// scriptEnd reads a script or task name at l[j:] ("test", "test:unit",
// "build") and the ": " after it, and returns where the prefix ends, or 0.
func scriptEnd(l string, j int) int {
	if j >= len(l) || !isLetter(l[j]) {
		return 0
	}
	k := j
	for k < len(l) && k-j < 64 && (isWordByte(l[k]) || l[k] == ':' || l[k] == '.' || l[k] == '-') {
		k++
	}
	// The name's own colons ("test:unit") were read with it: the prefix
	// ends at its last one, before a space or the line's end.
	if l[k-1] != ':' || k-1 == j {
		return 0
	}
	if k == len(l) {
		return k
	}
	if l[k] != ' ' {
		return 0
	}
	return k + 1
}

func isTaskNameByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '-' || c == '/' || c == '@'
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// hasReplicaNumber reports whether a container's name ends in "-1" or "_1",
// as docker compose numbers a service's containers.
func hasReplicaNumber(name string) bool {
	d := digitsBefore(name)
	return d > 0 && d < len(name) && (name[len(name)-d-1] == '-' || name[len(name)-d-1] == '_')
}
