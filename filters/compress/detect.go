package compress

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Detect says what a tool output looks like. The tool call decides when it
// is unambiguous (a file-read tool returns a file, a listing tool a listing);
// for shell tools the command line narrows it down (pytest, git diff, grep);
// otherwise, and to confirm, the content decides.
func Detect(text string, hint Hint) Kind { return detect(text, hint, true, nil) }

// detect is Detect; mayStop lets a scan stop once the output is surely a
// test log (scanStats.testDecided). The tests and FuzzStructural check it
// decides as the scan of every line does. notes, when not nil, takes what
// the scan read of each line (lineNotes).
func detect(text string, hint Hint, mayStop bool, notes *lineNotes) Kind {
	hint = hint.decoded()
	// JSON first, whatever the tool: a JSON result must stay valid JSON.
	if looksJSON(text) {
		return KindJSON
	}
	// The line scan is most of Detect's cost; a command that names its
	// kind (pytest, go test) needs none of it, and a decision that reads
	// a few counts has only those counted. A later decision that reads
	// more rescans once, for all of them.
	var scanned *scanStats
	stopAtHit := false
	s := func(want scanWant) *scanStats {
		if scanned == nil || scanned.want&want != want {
			if scanned != nil {
				want = wantAll
			}
			// Only a scan of every signal precedes a classifier that
			// reads the notes (the diagnostic kinds'); a narrower one
			// mostly decides a listing or a search.
			var ns *lineNotes
			if want == wantAll {
				ns = notes
			}
			v := scanAll(text, want, mayStop, stopAtHit, ns)
			scanned = &v
		}
		return scanned
	}
	switch kindFromTool(hint) {
	case KindFileRead:
		// A read of a source file is code, whatever its lines look
		// like: the scan for a test report or a directory is skipped.
		// None of the 2,164 reads of source files in the committed
		// sessions detects otherwise by its content
		// (TestSourceReadsDetectAsReads); the documents and logs a test
		// report is saved as (.md, .txt, .log, .xml, .html, .out) are
		// still read for it.
		if readsSourceFile(hint) {
			return KindFileRead
		}
		// A test report or a `go test -json` stream opened with a read
		// tool is read for its failures.
		if s(wantTest | wantList).isTest() {
			return KindTestLog
		}
		if s(wantList).listing() && contains(editorTools, strings.ToLower(hint.ToolName)) {
			return KindDirListing // the editor's view of a directory
		}
		// A command's output saved to a file and read back (Claude
		// Code's .output of a background task, a build.log) is the
		// command's output behind the read's line numbers: a traceback,
		// a log or a failed build's text, kept as such. Read as a file
		// it kept its head, tail and names, and lost its error lines.
		if readsOutputFile(hint) {
			return s(wantAll).outputKind()
		}
		return KindFileRead
	case KindSearch:
		// One hit settles it, so the scan stops at the first. It is only
		// partial when it found one, and then nothing reads it again.
		stopAtHit = true
		if s(wantHits|wantList).hits > 0 {
			return KindSearch
		}
		stopAtHit = false
		if s(wantList).listing() {
			return KindSearch
		}
	case KindDirListing:
		if s(wantList|wantHits|wantDiag).listing() || s(wantHits).hits == 0 && s(wantDiag).diagnostics == 0 {
			return KindDirListing
		}
	}
	switch kindFromCommand(commandOf(hint)) {
	case KindTestLog:
		return KindTestLog
	case KindDiff:
		if s(0).isDiff() {
			return KindDiff
		}
	case KindSearch:
		if (s(wantHits|wantTest).hits > 0 || s(wantHits).plainHits*2 > s(0).nonEmpty) && !s(wantTest).isTest() {
			return KindSearch
		}
	case KindDirListing:
		if !s(wantTest|wantDiag).isTest() && s(wantDiag).diagnostics == 0 {
			return KindDirListing
		}
	case KindFileRead:
		if readsOutputFile(hint) {
			// A shell's read of a saved run (tail -n 80 build.log, nl
			// -ba run.out): its lines are the command's, and say what
			// kind they are.
			return s(wantAll).outputKind()
		}
		if !s(wantTest).isTest() && !s(0).isDiff() {
			return KindFileRead
		}
	}
	return s(wantAll).kind()
}

// Tool names by what their output is, lower-cased. Claude Code, Codex,
// Copilot, OpenClaw, SWE-agent and a few MCP servers; shell tools are
// recognised separately because their output depends on the command.
var (
	readTools = []string{
		"read", "read_file", "readfile", "view", "view_file", "open", "open_file",
		"cat", "notebookread", "read_notebook", "get_file_contents", "fs_read", "read_text_file",
	}
	searchTools = []string{
		"grep", "grep_search", "search", "search_dir", "search_file", "ripgrep", "rg",
		"codebase_search", "text_search", "find_in_files", "search_files", "file_search_content",
	}
	listTools = []string{
		"glob", "ls", "list_dir", "list_directory", "find_file", "file_search", "list_files",
		"directory_tree", "tree", "list", "find",
	}
	// editorTools do several things; the call's "command" says which
	// (Anthropic's text editor tool, OpenHands' and SWE-agent's
	// str_replace_editor): "view" returns a file or a directory listing.
	editorTools = []string{"str_replace_editor", "str_replace_based_edit_tool", "text_editor"}
	shellTools  = []string{
		"execute_bash", "bash", "shell", "exec", "exec_command", "run_in_terminal", "run_shell_command",
		"execute_command", "terminal", "run_command", "command", "local_shell", "container.exec",
		"sh", "zsh", "powershell", "cmd", "python", "run", "process",
	}
)

func kindFromTool(h Hint) Kind {
	name := strings.ToLower(strings.TrimSpace(h.ToolName))
	// MCP tools come as "mcp__server__tool"; the last part says what it does.
	if i := strings.LastIndex(name, "__"); i >= 0 {
		name = name[i+2:]
	}
	switch {
	case name == "":
		return ""
	case contains(readTools, name):
		return KindFileRead
	case contains(searchTools, name):
		return KindSearch
	case contains(listTools, name):
		return KindDirListing
	case contains(editorTools, name) && jsonsafe.ValidString(h.Args):
		if gjson.Get(h.Args, "command").String() == "view" {
			return KindFileRead
		}
	}
	return ""
}

// sourceExts are the extensions of program source, style sheets and
// configuration: files no test runner writes its report to.
var sourceExts = map[string]bool{
	"go": true, "py": true, "pyi": true, "ts": true, "tsx": true, "js": true, "jsx": true, "mjs": true, "cjs": true,
	"rs": true, "java": true, "kt": true, "kts": true, "scala": true, "groovy": true, "gradle": true, "rb": true,
	"php": true, "c": true, "h": true, "cc": true, "cpp": true, "cxx": true, "hpp": true, "hh": true, "cs": true,
	"swift": true, "m": true, "mm": true, "ex": true, "exs": true, "heex": true, "erl": true, "hrl": true,
	"hs": true, "ml": true, "mli": true, "clj": true, "cljs": true, "lua": true, "dart": true, "zig": true,
	"nim": true, "jl": true, "r": true, "pl": true, "pm": true, "sol": true, "pony": true, "proto": true,
	"sh": true, "bash": true, "zsh": true, "fish": true, "ps1": true, "sql": true,
	"vue": true, "svelte": true, "astro": true, "css": true, "scss": true, "sass": true, "less": true,
	"yml": true, "yaml": true, "toml": true, "tf": true, "hcl": true,
}

// readsSourceFile reports whether a read tool's call names a file with a
// source extension (sourceExts), in the argument names read tools use.
func readsSourceFile(h Hint) bool {
	ext, ok := readExtension(h)
	return ok && sourceExts[ext]
}

// readsOutcome reports whether a read, by a read tool or a shell's cat,
// head, sed -n, …, that detect kept as a file read may be of a run's saved
// output: one of a file whose name has no extension, or no name the call
// shows (a CI job's log fetched to a file, `nl -ba job`). A file with a
// saved output's extension is never a file read (detect reads it as the
// output it holds).
func readsOutcome(h Hint) bool { return readFileExtension(h) == "" }

// readsOutputFile reports whether a read tool's call names a file a
// command's output is saved to (isSavedOutputExt; Claude Code saves a
// background task's output as .output).
func readsOutputFile(h Hint) bool { return isSavedOutputExt(readFileExtension(h)) }

// readFileExtension is the lower-cased extension of the file a read names:
// a read tool's path argument, or else the file a shell's read command
// names (`tail -n 80 /tmp/build.log`, `sed -n 1,200p ci.txt`, `cat
// run.out`: agents read their own saved runs back this way as often as
// with a read tool); "" when it names none or the name has none.
func readFileExtension(h Hint) string {
	if ext, ok := readExtension(h); ok {
		return ext
	}
	return shellReadExtension(commandOf(h))
}

// isSavedOutputExt reports whether a file extension is one a command's
// output is saved under: .log, .txt, .out, .output (Claude Code's background
// tasks) or .err.
func isSavedOutputExt(ext string) bool {
	switch ext {
	case "log", "txt", "out", "output", "err":
		return true
	}
	return false
}

// shellReadExtension returns the lower-cased extension of the file the
// last read command of a command line (cat, head, tail, sed -n, …: the
// programs kindFromCommand reads as file reads) names, if it reads one
// file; "" otherwise.
func shellReadExtension(cmd string) string {
	ext := ""
	for _, seg := range splitCommand(cmd) {
		if seg.piped || classifyProgram(seg.cmd) != KindFileRead {
			continue
		}
		words := strings.Fields(seg.cmd)
		var files []string
		for k := 1; k < len(words); k++ {
			w := strings.Trim(words[k], "'\"")
			switch {
			case strings.HasPrefix(w, "-") && len(w) > 1:
				if len(w) == 2 && (w[1] == 'n' || w[1] == 'c') && k+1 < len(words) {
					k++ // head/tail -n 80: the count
				}
			case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>"):
				k = len(words)
			case strings.Contains(w, "=") || digits(w) == len(w):
				// An assignment, or a count written apart
				// (Get-Content x.log -Tail 50).
			default:
				files = append(files, w)
			}
		}
		if len(files) == 0 {
			continue
		}
		ext, _ = fileExtension(files[len(files)-1])
	}
	return ext
}

// fileExtension returns the lower-cased extension of a path's file name,
// ok false when the name has none or one longer than six bytes.
func fileExtension(path string) (ext string, ok bool) {
	name := path[strings.LastIndexAny(path, "/\\")+1:]
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || len(name)-dot > 7 {
		return "", false
	}
	return strings.ToLower(name[dot+1:]), true
}

// readExtension returns the lower-cased extension of the file a read
// tool's call names, in the argument names read tools use; ok is false
// when it names none or the name has no short extension.
func readExtension(h Hint) (ext string, ok bool) {
	if h.Args == "" || h.Args[0] != '{' || !jsonsafe.ValidString(h.Args) {
		return "", false
	}
	for _, v := range gjson.GetMany(h.Args, "file_path", "path", "filePath", "target_file", "absolute_path") {
		if v.Type != gjson.String {
			continue
		}
		return fileExtension(v.String())
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// commandOf pulls the command line out of a shell tool's arguments:
// {"command": "..."} (Claude Code, Copilot, OpenClaw), {"cmd": "..."} or
// {"command": ["bash","-lc","..."]} (Codex).
func commandOf(h Hint) string {
	name := strings.ToLower(h.ToolName)
	if contains(editorTools, name) {
		return "" // its "command" is view, create, str_replace: no command line
	}
	if !contains(shellTools, name) && h.Args == "" {
		return ""
	}
	if h.Args == "" {
		return ""
	}
	if !jsonsafe.ValidString(h.Args) {
		// Some harnesses log the bare command line.
		return h.Args
	}
	// A Codex code-mode program is read as it is here, not as the commands
	// it runs (codemode.go). Their kinds misread its batches (a few reads
	// then a search are not a search's hits), and their words as query
	// terms cost the held-out set summaries (docs/quality-log.md, stop
	// 52). Its output's lines say what it is.
	return commandLine(gjson.Parse(h.Args), false)
}

// CommandLine reads the command out of a shell tool's parsed arguments:
// the first of command, cmd, commandLine, script, input that is a string,
// or the last element of an argv array. A Codex code-mode program (exec's
// input) gives the shell commands it runs, one per line: what a summary
// of the call says it ran.
func CommandLine(args gjson.Result) string { return commandLine(args, true) }

// commandLine is CommandLine; codeMode reads a code-mode program's
// commands.
func commandLine(args gjson.Result, codeMode bool) string {
	for _, key := range [...]string{"command", "cmd", "commandLine", "script", "input"} {
		v := args.Get(key)
		switch {
		case v.Type == gjson.String:
			if codeMode && key == "input" {
				if cmd, ok := codeModeCommand(v.Str); ok {
					return cmd
				}
			}
			return v.String()
		case v.IsArray():
			arr := v.Array()
			if len(arr) > 0 {
				return arr[len(arr)-1].String()
			}
		}
	}
	return ""
}

// kindFromCommand classifies a shell command line. A test runner anywhere in
// it wins (the output is a test log even when piped through tail); otherwise
// the last stage of the last pipeline decides, except that a filter reading
// the pipe (`| head -20`, `| grep -v x`, `| sort`) passes on the kind of what
// it reads: `grep -rn x . | head` prints search hits, `python run.py | tail`
// whatever run.py prints, and neither is a file read.
func kindFromCommand(cmd string) Kind {
	if cmd == "" {
		return ""
	}
	var last Kind
	for _, seg := range splitCommand(cmd) {
		k := classifyProgram(seg.cmd)
		if k == KindTestLog {
			return KindTestLog
		}
		if seg.piped && isPipeFilter(seg.cmd) {
			continue
		}
		last = k
	}
	return last
}

// A commandPart is one command of a command line; piped when its input is
// the previous command's output.
type commandPart struct {
	cmd   string
	piped bool
}

// splitCommand splits on the shell's list and pipe operators outside
// quotes: grep "a\|b" is one command.
func splitCommand(cmd string) []commandPart {
	var parts []commandPart
	var quote byte
	start, piped := 0, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '&' && (i > 0 && cmd[i-1] == '>' || i+1 < len(cmd) && cmd[i+1] == '>'):
			// A redirection ("2>&1", ">&2", "&> out.log"), not a list.
		case c == '|' || c == ';' || c == '&' || c == '\n':
			if p := strings.TrimSpace(cmd[start:i]); p != "" {
				parts = append(parts, commandPart{p, piped})
			}
			// "|" pipes, "||" does not; "|&" pipes stderr too.
			piped = c == '|' && !(i+1 < len(cmd) && cmd[i+1] == '|') && !(i > 0 && cmd[i-1] == '|')
			start = i + 1
		}
	}
	if p := strings.TrimSpace(cmd[start:]); p != "" {
		parts = append(parts, commandPart{p, piped})
	}
	return parts
}

// pipeFilters are the programs that, reading a pipe, print some of what
// they read unchanged (a count or a rewrite is not that: wc, jq, awk with a
// program are left out), with how many operands they take before a file:
// a pattern or a script for grep and sed, none for the others.
var pipeFilters = map[string]int{
	"head": 0, "tail": 0, "sort": 0, "uniq": 0, "cat": 0, "less": 0, "more": 0, "tee": 0, "cut": 0, "tr": 2,
	"grep": 1, "egrep": 1, "fgrep": 1, "rg": 1, "sed": 1,
}

// isPipeFilter reports whether a piped command reads only the pipe: a
// filter program with no file operand.
func isPipeFilter(seg string) bool {
	words := strings.Fields(seg)
	if len(words) == 0 {
		return false
	}
	operands, ok := pipeFilters[words[0]]
	if !ok {
		return false
	}
	n := 0
	for k := 1; k < len(words); k++ {
		w := words[k]
		switch {
		case strings.HasPrefix(w, "-") && len(w) > 1:
			// A flag; "-n 20", "-A 3", "-e PAT" take the next word.
			if len(w) == 2 && strings.ContainsRune("nABCcdfkmte", rune(w[1])) && k+1 < len(words) {
				if w[1] == 'e' {
					n++ // -e PAT is the pattern
				}
				k++
			}
		case w == "2>&1" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>"):
			// Redirections are not operands.
		default:
			if digits(w) == len(w) {
				continue // a count written apart ("head -n 20" read loosely)
			}
			n++
		}
	}
	return n <= operands
}

func classifyProgram(seg string) Kind {
	words := strings.Fields(seg)
	// Skip environment assignments and wrappers.
	for len(words) > 0 {
		w := words[0]
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			words = words[1:]
			continue
		case w == "sudo" || w == "time" || w == "env" || w == "nice" || w == "command" || w == "exec" || w == "stdbuf" || w == "(" || w == "{":
			words = words[1:]
			continue
		case w == "timeout" && len(words) > 1:
			words = words[2:]
			continue
		case w == "bundle" && len(words) > 2 && words[1] == "exec":
			// "bundle exec rspec", "bundle exec rails test": the program
			// bundler runs says what the output is.
			words = words[2:]
			continue
		case w == "cd" || w == "export" || w == "source" || w == "." || w == "set":
			return ""
		}
		break
	}
	if len(words) == 0 {
		return ""
	}
	prog := words[0]
	if strings.HasSuffix(prog, "bin/test") || strings.HasSuffix(prog, "runtests.py") {
		return KindTestLog // sympy's bin/test, django's tests/runtests.py
	}
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	prog = strings.Trim(prog, "'\"()")
	arg := func(k int) string {
		if k < len(words) {
			return strings.Trim(words[k], "'\"")
		}
		return ""
	}
	hasWord := func(w string) bool {
		for _, x := range words[1:] {
			if strings.Trim(x, "'\"") == w {
				return true
			}
		}
		return false
	}
	if k, ok := powerShellKinds[strings.ToLower(prog)]; ok {
		return k // PowerShell's names are case-insensitive: Get-Content, gc
	}
	switch prog {
	case "pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ava", "rspec", "phpunit",
		"ctest", "gotestsum", "nosetests", "trial", "runtests.py", "karma", "playwright",
		"pest", "paratest", "bats", "busted", "prove", "behave":
		return KindTestLog
	case "rails", "rake":
		// minitest under Rails and rake: "bin/rails test", "rake test",
		// "rails test:system".
		for _, w := range words[1:] {
			if w == "test" || strings.HasPrefix(w, "test:") {
				return KindTestLog
			}
		}
	case "stack", "cabal", "dune", "zig", "lein":
		if hasWord("test") {
			return KindTestLog
		}
	case "rebar3":
		if hasWord("eunit") || hasWord("ct") {
			return KindTestLog
		}
	case "python", "python3", "python2", "uv", "poetry", "pipenv", "hatch":
		if hasWord("pytest") || hasWord("unittest") || hasWord("test") || hasWord("tox") ||
			strings.Contains(seg, "runtests") || strings.Contains(seg, "manage.py test") || strings.Contains(seg, "bin/test") {
			return KindTestLog
		}
		return ""
	case "go":
		if arg(1) == "test" || arg(1) == "vet" {
			return KindTestLog
		}
	case "cargo":
		if arg(1) == "test" || arg(1) == "nextest" {
			return KindTestLog
		}
	case "npm", "pnpm", "yarn", "bun", "npx", "deno":
		if hasWord("test") || hasWord("jest") || hasWord("vitest") || hasWord("mocha") || strings.HasPrefix(arg(1), "test") || strings.HasPrefix(arg(2), "test") {
			return KindTestLog
		}
	case "make", "gradle", "gradlew", "mvn", "mvnw", "dotnet", "bazel", "mix", "sbt", "swift", "flutter", "dart", "xcodebuild":
		if hasWord("test") || hasWord("check") || strings.HasPrefix(arg(1), "test") {
			return KindTestLog
		}
	case "git":
		switch arg(1) {
		case "diff", "show", "format-patch", "stash":
			return KindDiff
		case "log":
			if hasWord("-p") || hasWord("--patch") {
				return KindDiff
			}
			return KindLog
		case "grep":
			return KindSearch
		case "ls-files", "ls-tree":
			return KindDirListing
		}
	case "gh":
		// The GitHub CLI prints a pull request's unified diff, or with
		// --name-only its files.
		if arg(1) == "pr" && arg(2) == "diff" {
			if hasWord("--name-only") {
				return KindDirListing
			}
			return KindDiff
		}
	case "diff":
		return KindDiff
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "git-grep":
		if hasWord("-l") || hasWord("--files-with-matches") || hasWord("-c") {
			return KindDirListing
		}
		return KindSearch
	case "ls", "tree", "find", "fd", "fdfind", "du", "exa", "eza":
		return KindDirListing
	case "cat", "head", "tail", "nl", "bat", "less", "more", "sed", "awk":
		if prog == "sed" && !hasWord("-n") {
			return ""
		}
		if prog == "awk" {
			return ""
		}
		return KindFileRead
	case "journalctl", "dmesg", "kubectl", "docker":
		if prog == "kubectl" || prog == "docker" {
			if arg(1) == "logs" {
				return KindLog
			}
			return ""
		}
		return KindLog
	}
	return ""
}

// powerShellKinds are the kinds of what PowerShell's cmdlets (and their
// aliases) that read, search and list print: Claude Code's PowerShell tool
// on Windows and other harnesses run them where a POSIX shell would run
// cat, grep and ls. cmd.exe's findstr and dir with them (not its type,
// which a POSIX shell runs to name a command).
var powerShellKinds = map[string]Kind{
	"get-content": KindFileRead, "gc": KindFileRead,
	"select-string": KindSearch, "sls": KindSearch, "findstr": KindSearch,
	"get-childitem": KindDirListing, "gci": KindDirListing, "dir": KindDirListing,
	"invoke-pester": KindTestLog,
}

// looksJSON reports whether the whole text is one JSON value that is an
// object or an array (a bare string or number is left to the text kinds).
func looksJSON(text string) bool {
	t := strings.TrimSpace(text)
	if len(t) < 2 {
		return false
	}
	if !(t[0] == '{' && t[len(t)-1] == '}') && !(t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	return jsonsafe.ValidString(t)
}
