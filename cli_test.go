package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHelpAndVersion(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		stdoutHas  []string
		stderrHas  []string
		stdoutNone bool
	}{
		// The command list, with an example and the exit codes, from every spelling.
		{args: []string{"--help"}, code: 0, stdoutHas: []string{"healthcheck", "toolproc rewrite --path", "Exit codes", "2  usage"}},
		{args: []string{"-h"}, code: 0, stdoutHas: []string{"Commands:", "report"}},
		{args: []string{"help"}, code: 0, stdoutHas: []string{"Commands:", "version"}},
		// One command: description, flags, example, exit codes.
		{args: []string{"help", "rewrite"}, code: 0, stdoutHas: []string{"Usage:", "-ndjson", "Example:", "Exit codes:", "1  a body was passed through"}},
		{args: []string{"rewrite", "--help"}, code: 0, stdoutHas: []string{"-profile", "Exit codes:"}},
		{args: []string{"serve", "--help"}, code: 0, stdoutHas: []string{"-grpc-addr", "SIGTERM", "Exit codes:"}},
		{args: []string{"config", "-h"}, code: 0, stdoutHas: []string{"-config", "Example:"}},
		{args: []string{"report", "--help"}, code: 0, stdoutHas: []string{"-audit", "-prices"}},
		{args: []string{"healthcheck", "--help"}, code: 0, stdoutHas: []string{"-addr", "/readyz", "distroless"}},
		{args: []string{"help", "help"}, code: 0, stdoutHas: []string{"toolproc help [COMMAND]"}},
		{args: []string{"help", "version"}, code: 0, stdoutHas: []string{"toolproc_build_info"}},
		// Wrong use: exit 2, the reason and the way to help on stderr.
		{args: []string{"help", "nope"}, code: 2, stderrHas: []string{`no command "nope"`}, stdoutNone: true},
		{args: []string{"nope"}, code: 2, stderrHas: []string{`unknown command "nope"`, "Commands:"}, stdoutNone: true},
		{args: []string{"serve", "--bogus"}, code: 2, stderrHas: []string{"-bogus", "toolproc help serve"}, stdoutNone: true},
		{args: []string{"--bogus"}, code: 2, stderrHas: []string{"-bogus"}, stdoutNone: true},
		{args: []string{"rewrite"}, code: 2, stderrHas: []string{"--path is required", "toolproc help rewrite"}, stdoutNone: true},
		{args: []string{"config", "extra"}, code: 2, stderrHas: []string{"no arguments"}, stdoutNone: true},
		// Version from every spelling.
		{args: []string{"version"}, code: 0, stdoutHas: []string{"toolproc ", "commit ", "go1."}},
		{args: []string{"--version"}, code: 0, stdoutHas: []string{"toolproc ", "go1."}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli(tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, &stdout, &stderr)
			}
			for _, s := range tc.stdoutHas {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, &stdout)
				}
			}
			for _, s := range tc.stderrHas {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, &stderr)
				}
			}
			if tc.stdoutNone && stdout.Len() > 0 {
				t.Errorf("stdout not empty on a usage error:\n%s", &stdout)
			}
		})
	}
}

// Every command has what its help promises, so none is listed half-written.
func TestEveryCommandDocumented(t *testing.T) {
	for _, c := range commands() {
		if c.summary == "" || c.usage == "" || c.about == "" || c.example == "" || !strings.Contains(c.exits, "0  ") {
			t.Errorf("command %s lacks a summary, usage, description, example or exit codes", c.name)
		}
		if !strings.HasPrefix(c.example, "toolproc ") {
			t.Errorf("command %s: example %q does not start with toolproc", c.name, c.example)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}))
	defer ready.Close()
	addr := strings.TrimPrefix(ready.URL, "http://")
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	cases := []struct {
		name string
		args []string
		code int
		has  string
	}{
		{"healthz answers 200", []string{"--addr", addr, "--path", "/healthz"}, 0, "ok"},
		{"draining readyz answers 503", []string{"--addr", addr}, 1, "503"},
		{"nothing listening", []string{"--addr", closedAddr, "--timeout", "1s"}, 1, "refused"},
		{"bad path", []string{"--path", "readyz"}, 2, "must start with /"},
		{"stray argument", []string{"now"}, 2, "no arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli(append([]string{"healthcheck"}, tc.args...), nil, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.has) {
				t.Fatalf("exit %d (want %d), output lacks %q\nstdout: %s\nstderr: %s", code, tc.code, tc.has, &stdout, &stderr)
			}
		})
	}
}
