package compress

import (
	"fmt"
	"index/suffixarray"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// Fact extraction for the quality harness, following the v1 extractor table
// of the quality method (critical facts per record). It is written independently of the
// compressor's own line predicates (regular expressions here, hand-written
// matchers there) so that the measurement does not just echo the
// implementation.

type factClass string

const (
	factT factClass = "T" // failing test IDs
	factS factClass = "S" // run summaries
	factE factClass = "E" // error lines
	factX factClass = "X" // exception types in error lines
	factL factClass = "L" // file:line locations
	factP factClass = "P" // paths in listings and search results
	factJ factClass = "J" // JSON key paths (top two levels) and id/status/error/... values
	factD factClass = "D" // diff file and hunk headers
	factU factClass = "U" // next-step references (session records only)
)

var factClasses = []factClass{factT, factS, factE, factX, factL, factP, factJ, factD, factU}

// factWeight is the §3.2 weight of each class in the weighted score FRS.
var factWeight = map[factClass]float64{factT: 3, factS: 3, factE: 3, factX: 2, factL: 2, factP: 1, factJ: 1, factD: 2, factU: 1}

type fact struct {
	class factClass
	text  string // normalized: whitespace collapsed
	path  string // L only
	line  string // L only
}

var (
	reT = []*regexp.Regexp{
		regexp.MustCompile(`^(?:FAILED|ERROR) \S+`),                           // pytest short summary
		regexp.MustCompile(`^(?:FAIL|ERROR): \S+ \([\w.]+\)`),                 // unittest / django
		regexp.MustCompile(`--- FAIL: \S+`),                                   // go
		regexp.MustCompile(`^\s*(?:✕|●) .+$`),                                 // jest
		regexp.MustCompile(`^\w+ \([\w.]+\) \.\.\. (?:FAIL|ERROR)$`),          // unittest -v
		regexp.MustCompile(`^test_\w+ [FE]$`),                                 // sympy bin/test
		regexp.MustCompile(`^test \S+ \.\.\. FAILED$`),                        // cargo
		regexp.MustCompile(`\S+::\S+ (?:FAILED|ERROR)(?: \[\s*\d+%\])?$`),     // pytest -v
		regexp.MustCompile(`"Action":"fail","Package":"[^"]+","Test":"[^"]+`), // go test -json
		regexp.MustCompile(`^_{3,} \S+\.py:\w+ _{3,}$`),                       // sympy bin/test report header
	}
	// reTTest holds the forms that name failures only inside a test log:
	// elsewhere "1) " starts any numbered list.
	reTTest = []*regexp.Regexp{
		regexp.MustCompile(`^\s*\d{1,4}\) \S.*$`),  // mocha, rspec, phpunit
		regexp.MustCompile(`^\s*FAIL\s+\S+ > .+$`), // vitest
	}
	reS = []*regexp.Regexp{
		regexp.MustCompile(`\d+ (?:failed|passed|errors?)\b[^=\n]* in [\d.]+s`),
		regexp.MustCompile(`^Ran \d+ tests? in [\d.]+s`),
		regexp.MustCompile(`^FAILED \((?:failures|errors|skipped)=[^)]*\)`),
		regexp.MustCompile(`^OK(?: \([^)]*\))?$`),
		regexp.MustCompile(`^(?:ok|FAIL)\s+\S+\s+[\d.]+s`),
		regexp.MustCompile(`^(?:PASS|FAIL)$`),
		regexp.MustCompile(`tests finished: .*`),
		regexp.MustCompile(`^Tests:\s+.*`),
		regexp.MustCompile(`test result: .*`),
		regexp.MustCompile(`(?i)exit (?:status|code):? [1-9]\d*`),
		regexp.MustCompile(`^\d+ examples?, \d+ failures?`),              // rspec
		regexp.MustCompile(`^Tests: \d+, Assertions: \d+.*`),             // phpunit
		regexp.MustCompile(`^\s*Tests\s+\d+ (?:failed|passed).*\)$`),     // vitest
		regexp.MustCompile(`Interrupted: \d+ errors? during collection`), // pytest stopped early
	}
	reE = []*regexp.Regexp{
		regexp.MustCompile(`Traceback \(most recent call last\)`),
		regexp.MustCompile(`\w+(?:Error|Exception):`),
		regexp.MustCompile(`\berror[:\[]`),
		regexp.MustCompile(`\bfatal:`),
		regexp.MustCompile(`\bpanic:`),
		regexp.MustCompile(`^E\s`),
		regexp.MustCompile(`Segmentation fault`),
		regexp.MustCompile(`(?i)exit (?:status|code):? [1-9]\d*`),
	}
	reX  = regexp.MustCompile(`\b[A-Z]\w*(?:Error|Exception|Warning)\b`)
	reLp = regexp.MustCompile(`File "([^"]+)", line (\d+)`)
	reLg = regexp.MustCompile(`([\w./\\-]+\.[A-Za-z]\w{0,7}):(\d+)`)
)

// extractFacts returns the distinct facts of a tool output.
func extractFacts(text string, kind Kind) []fact {
	seen := make(map[string]bool)
	var out []fact
	add := func(f fact) {
		k := string(f.class) + "\x00" + f.text
		if f.text == "" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, f)
	}
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		tres := reT
		if kind == KindTestLog {
			tres = append(reT[:len(reT):len(reT)], reTTest...)
		}
		for _, re := range tres {
			if m := re.FindString(l); m != "" {
				add(fact{class: factT, text: collapseSpace(m)})
				break
			}
		}
		for _, re := range reS {
			if m := re.FindString(l); m != "" {
				add(fact{class: factS, text: collapseSpace(m)})
				break
			}
		}
		// Error lines are read where a program reports: not in JSON, and
		// not in file reads and diffs, whose "except ValueError:" and
		// `raise KeyError(k)` lines are code, not failures (the quality
		// method counts exception types in error lines, not in code
		// listings). Those kinds are measured by their own classes: U for
		// reads, D for diffs.
		if kind != KindJSON && kind != KindFileRead && kind != KindDiff && len(l) < 400 {
			for _, re := range reE {
				if re.MatchString(l) {
					add(fact{class: factE, text: collapseSpace(l)})
					for _, x := range reX.FindAllString(l, -1) {
						add(fact{class: factX, text: x})
					}
					break
				}
			}
		}
		if len(l) < 4000 {
			for _, m := range reLp.FindAllStringSubmatch(l, -1) {
				add(fact{class: factL, text: m[1] + ":" + m[2], path: m[1], line: m[2]})
			}
			for _, m := range reLg.FindAllStringSubmatch(l, -1) {
				add(fact{class: factL, text: m[1] + ":" + m[2], path: m[1], line: m[2]})
			}
		}
		switch kind {
		case KindSearch:
			if p, _, _ := parseHit(l); p != "" {
				add(fact{class: factP, text: p})
			}
		case KindDirListing:
			if isPathLine(l) {
				add(fact{class: factP, text: strings.TrimSpace(l)})
			}
		case KindDiff:
			if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "@@ ") {
				add(fact{class: factD, text: collapseSpace(l)})
			}
		}
	}
	if kind == KindDiff {
		for _, f := range diffFileCounts(lines) {
			add(fact{class: factD, text: f})
		}
	}
	if kind == KindJSON {
		root := gjson.Parse(text)
		var walk func(v gjson.Result, depth int)
		walk = func(v gjson.Result, depth int) {
			if depth > 2 {
				return
			}
			if v.IsArray() {
				// The keys of the first element stand for the array.
				arr := v.Array()
				if len(arr) > 0 {
					walk(arr[0], depth)
				}
				return
			}
			v.ForEach(func(k, val gjson.Result) bool {
				add(fact{class: factJ, text: k.Raw})
				switch k.String() {
				case "id", "status", "error", "message", "code", "name":
					if !val.IsObject() && !val.IsArray() && len(val.Raw) < 200 {
						add(fact{class: factJ, text: k.Raw + "=" + val.Raw})
					}
				}
				if val.IsObject() || val.IsArray() {
					walk(val, depth+1)
				}
				return true
			})
		}
		walk(root, 1)
	}
	return out
}

// diffFileCounts returns "path +added -removed" for each file of a diff
// (the new path; a/ and b/ dropped), counting the lines of each hunk body
// as its header announces them.
func diffFileCounts(lines []string) []string {
	type fc struct {
		path     string
		add, del int
	}
	var files []fc
	oldLeft, newLeft := 0, 0
	for _, l := range lines {
		if oldLeft > 0 || newLeft > 0 {
			if len(files) == 0 {
				files = append(files, fc{path: "?"})
			}
			f := &files[len(files)-1]
			switch {
			case strings.HasPrefix(l, "+"):
				f.add++
				newLeft--
			case strings.HasPrefix(l, "-"):
				f.del++
				oldLeft--
			case strings.HasPrefix(l, "\\"):
			default:
				oldLeft--
				newLeft--
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if k := strings.LastIndex(l, " b/"); k >= 0 {
				files = append(files, fc{path: l[k+3:]})
			}
		case strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "+++ /dev/null"):
			p := strings.TrimPrefix(strings.SplitN(l[4:], "\t", 2)[0], "b/")
			if len(files) == 0 || files[len(files)-1].add+files[len(files)-1].del > 0 {
				files = append(files, fc{path: strings.TrimSpace(p)})
			} else {
				files[len(files)-1].path = strings.TrimSpace(p)
			}
		case strings.HasPrefix(l, "@@ "):
			oldLeft, newLeft = hunkCounts(l)
		}
	}
	var out []string
	for _, f := range files {
		out = append(out, fmt.Sprintf("%s +%d -%d", f.path, f.add, f.del))
	}
	return out
}

// matcher answers "does this fact survive in out" for many facts: with many
// facts to look up, substring search goes through a suffix array.
type matcher struct {
	out, collapsed string
	idx            *suffixarray.Index
}

func newMatcher(out string, facts int) *matcher {
	m := &matcher{out: out, collapsed: collapseSpace(out)}
	if facts > 64 {
		m.idx = suffixarray.New([]byte(m.collapsed))
	}
	return m
}

func (m *matcher) contains(s string) bool {
	if m.idx != nil {
		return len(m.idx.Lookup([]byte(s), 1)) > 0
	}
	return strings.Contains(m.collapsed, s)
}

func (m *matcher) survives(f fact) bool {
	if f.class != factL && f.class != factJ {
		return m.contains(f.text)
	}
	if f.class == factL {
		return survives(f, m.collapsed, m.out)
	}
	return survives(f, m.collapsed, m.out)
}

// survives applies the §3.2 (b) matching rule to one fact and a compressed
// output (also given whitespace-collapsed).
func survives(f fact, collapsed, out string) bool {
	switch f.class {
	case factL:
		// Literal: "path:line" as an agent pastes it into its next call
		// (no digit after it), or the Python frame it came from, kept
		// verbatim. A path with its line numbers elsewhere on the line
		// ("a.go at lines 12, 40", "dir/{a.py:1; b.py:2}") does not count:
		// no tool and no grep reads it (issue 23).
		return hasNumberAfter(out, f.path+":", f.line) || strings.Contains(out, `File "`+f.path+`", line `+f.line+",") ||
			hasNumberAfter(out, `File "`+f.path+`", line `, f.line)
	case factJ:
		if k, v, ok := strings.Cut(f.text, "="); ok {
			return strings.Contains(out, k) && strings.Contains(out, v)
		}
		return strings.Contains(out, f.text)
	}
	return strings.Contains(collapsed, f.text)
}

// hasNumberAfter reports whether prefix+n occurs in s with no digit after it.
func hasNumberAfter(s, prefix, n string) bool {
	pat := prefix + n
	for off := 0; ; {
		i := strings.Index(s[off:], pat)
		if i < 0 {
			return false
		}
		z := off + i + len(pat)
		if z == len(s) || !isDigit(s[z]) {
			return true
		}
		off = off + i + 1
	}
}
