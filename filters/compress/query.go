package compress

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Query-aware compression: the call's own arguments say what the agent is
// looking for (the script it ran, the test it named, the pattern it
// grepped, the symbol it sed'ed for), and lines that mention those terms
// are kept before others of their tier. Only the call's arguments are read,
// never a later turn, so a result compresses to the same bytes on every
// turn (the prompt-cache rule in the package comment).

// maxQueryTerms and minQueryTerm bound what a call contributes: a few
// distinctive words, not every token of a long shell pipeline.
const (
	maxQueryTerms = 8
	minQueryTerm  = 4
)

// queryTerms returns the distinctive words of a call's arguments: for a
// shell command the operands that are not flags or program names (paths,
// test ids, patterns), for other tools the values of pattern, query, path
// and similar members. Path operands also give their base name, which is
// how tracebacks and test ids usually name a file. Terms are distinct and
// in argument order.
func queryTerms(h Hint) []string {
	var words []string
	if cmd := commandOf(h); cmd != "" {
		words = shellOperands(cmd)
	} else if h.Args != "" && jsonsafe.ValidString(h.Args) {
		a := gjson.Parse(h.Args)
		for _, k := range [...]string{"pattern", "query", "regex", "search", "symbol", "test", "path", "file_path", "filename"} {
			if v := a.Get(k); v.Type == gjson.String {
				words = append(words, splitAlternatives(v.String())...)
			}
		}
	}
	var out []string
	add := func(w string) {
		w = strings.Trim(w, `"'`+"`.,;()[]{}")
		if len(w) < minQueryTerm || len(out) >= maxQueryTerms || strings.ContainsAny(w, "\n\r") {
			return
		}
		for _, x := range out {
			if x == w {
				return
			}
		}
		out = append(out, w)
	}
	for _, w := range words {
		add(w)
		if k := strings.LastIndexAny(w, `/\`); k >= 0 && k+1 < len(w) {
			add(w[k+1:])
		}
	}
	return out
}

// shellOperands splits a command line into the words worth looking for:
// quoted strings whole (a grep pattern, split on its alternatives), bare
// words that are not flags, redirections, program names or shell syntax.
func shellOperands(cmd string) []string {
	if len(cmd) > 4096 {
		cmd = cmd[:4096]
	}
	var words []string
	for i := 0; i < len(cmd); {
		c := cmd[i]
		switch {
		case c == '"' || c == '\'':
			j := strings.IndexByte(cmd[i+1:], c)
			if j < 0 {
				j = len(cmd) - i - 1
			}
			words = append(words, splitAlternatives(cmd[i+1:i+1+j])...)
			i += j + 2
		case c == ' ' || c == '\t' || c == '\n' || c == '|' || c == '&' || c == ';' || c == '(' || c == ')' || c == '<' || c == '>':
			i++
		default:
			j := i
			for j < len(cmd) && !strings.ContainsRune(" \t\n|&;()<>\"'", rune(cmd[j])) {
				j++
			}
			w := cmd[i:j]
			i = j
			if w[0] == '-' || w[0] == '$' || strings.Contains(w, "=") || isProgramWord(w) {
				continue
			}
			words = append(words, w)
		}
	}
	return words
}

// splitAlternatives splits a search pattern on its regex alternatives
// ("foo|bar", grep's "foo\|bar").
func splitAlternatives(p string) []string {
	p = strings.ReplaceAll(p, `\|`, "|")
	return strings.Split(p, "|")
}

// isProgramWord matches the commands and shell words that say nothing
// about what was looked for.
func isProgramWord(w string) bool {
	switch strings.ToLower(w) {
	case "python", "python3", "pytest", "python -m", "bash", "sh", "cd", "cat", "grep", "egrep", "rg", "find",
		"head", "tail", "sed", "awk", "echo", "git", "diff", "show", "log", "status", "npm", "npx", "yarn",
		"pnpm", "node", "go", "test", "run", "cargo", "make", "ls", "xargs", "sort", "uniq", "wc", "true",
		"false", "then", "else", "done", "exec", "sudo", "timeout", "env", "tests", "test.py", "runtests.py",
		"manage.py", "setup.py", "2>&1", "/dev/null", "/tmp", ".":
		return true
	}
	return false
}

// maxTermLines: a term on more lines than this is too common to say
// anything (the test file every passing line names).
const maxTermLines = 12

// distinctiveTermLines returns, for each query term found on at least one
// and at most maxTermLines lines, the lines that name it.
func (p *plan) distinctiveTermLines() (lines [][]int) {
	for _, t := range p.query {
		if at := p.linesNaming(t, maxTermLines+1); len(at) > 0 && len(at) <= maxTermLines {
			lines = append(lines, at)
		}
	}
	return lines
}

// linesNaming returns, in order, up to most of the lines whose view (as
// classifiers read it, up to 2,048 bytes) contains t. One substring search
// over the whole body finds the candidates, and only they are read as
// views: a search per line and term was a seventh of compressing a new
// request's results once its query terms were read (issue 23). A view is
// part of its line, so a line whose raw bytes lack t is never one.
func (p *plan) linesNaming(t string, most int) []int {
	body, starts := p.body, p.starts
	if p.vstarts != nil {
		body, starts = p.vbody, p.vstarts
	}
	var at []int
	i := 0 // the line the search is in
	for off := 0; off < len(body) && len(at) < most; {
		k := strings.Index(body[off:], t)
		if k < 0 {
			break
		}
		k += off
		for i+1 < len(starts) && int(starts[i+1]) <= k {
			i++
		}
		if i >= p.n {
			break
		}
		if l := p.viewLine(i); len(l) <= 2048 && strings.Contains(l, t) {
			at = append(at, i)
		}
		off = int(starts[i+1]) // the next line: one hit a line is enough
	}
	return at
}

// raiseQueryLines moves lines that mention a query term ahead of the other
// lines of their tier (rank 0), and passing or noise lines that mention one
// up to context: "pytest -k test_refund" is about test_refund even when it
// passed. Only distinctive terms count.
func (p *plan) raiseQueryLines() {
	lines := p.distinctiveTermLines()
	var raised map[int]bool // a line naming two terms is raised once
	if len(lines) > 1 {
		raised = make(map[int]bool)
	}
	for _, at := range lines {
		for _, i := range at {
			c := p.cls[i]
			if c.tier == tierCritical || c.tier == tierNever || raised[i] {
				continue
			}
			if raised != nil {
				raised[i] = true
			}
			nt := min(c.tier, tierHigh)
			if c.tier == tierNoise {
				nt = tierContext
			}
			p.cls[i].tier, p.cls[i].rank = nt, 0
		}
	}
}

// raiseAlternatives makes sure every alternative of a search pattern
// ("connect|dial|timeout") keeps its first hits: with hits round-robin by
// file, one busy alternative could otherwise fill the budget alone. With a
// single term every hit matches it and nothing changes.
func (p *plan) raiseAlternatives() {
	const perTerm = 2
	terms := p.query
	if len(terms) < 2 || p.hitLine == nil {
		return
	}
	for _, t := range terms {
		n := 0
		for i, l := range p.allLines() {
			if p.hitLine[i] == 0 && p.groupOf(i) < 0 || len(l) > 4096 || !strings.Contains(l, t) {
				continue
			}
			if p.cls[i].tier > tierHigh {
				p.cls[i].tier, p.cls[i].rank = tierHigh, 0
			}
			if n++; n == perTerm {
				break
			}
		}
	}
}

// mentionsQuery reports whether a line names one of the query terms.
func (p *plan) mentionsQuery(l string) bool {
	if len(l) > 2048 {
		return false
	}
	for _, t := range p.query {
		if strings.Contains(l, t) {
			return true
		}
	}
	return false
}
