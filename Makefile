# toolproc — see README.md. `make run` and `make test` are the two set-up commands.
SHELL := /bin/bash
GO ?= go
BIN := bin
RESPONSE_BODY_MODE ?= FULL_DUPLEX_STREAMED
UPSTREAM ?=
CONFIG ?=
FUZZTIME ?= 10s
BENCHTIME ?= 1s

# staticcheck is installed once per version under .tools/ (kept by make
# clean): `go run pkg@version` asks the module proxy about deprecations on
# every run, so it cannot run offline.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
STATICCHECK_BIN := .tools/staticcheck-$(STATICCHECK_VERSION)

.PHONY: run build test test-quick deps test-deploy check-deps node-deps vet validate e2e e2e-external e2e-processes release-check release-snapshot bench bench-e2e bench-e2e-cpu bench-speed bench-sessions heldout quality fuzz fuzz-targets fuzz-one lint fmt clean

# The release version stamped into the binary (toolproc version, the startup
# log, toolproc_build_info): the nearest tag from git describe, e.g.
# v0.1.0 or v0.1.0-3-gabc1234-dirty. Without git or tags it is empty and the
# binary falls back to its module version, else "dev". REVISION is the commit
# for builds Go does not stamp itself (GOFLAGS=-buildvcs=false, no .git).
# Override: make build VERSION=v0.2.0.
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/toolproc/toolproc/extproc.version=$(VERSION) -X github.com/toolproc/toolproc/extproc.revision=$(REVISION)

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/toolproc .
	$(GO) build -o $(BIN)/standin ./testenv/cmd/standin

# Starts toolproc (gRPC 127.0.0.1:50051, admin 127.0.0.1:9000), the Envoy
# stand-in (127.0.0.1:10000, replay 127.0.0.1:10001) and, unless UPSTREAM is
# set, the fake LLM upstream (127.0.0.1:18080). Ctrl-C stops everything.
run: build
	@trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM EXIT; \
	$(BIN)/toolproc serve $(if $(CONFIG),--config $(CONFIG)) & \
	$(BIN)/standin -response-body-mode $(RESPONSE_BODY_MODE) -scenarios testenv/testdata/streams $(if $(UPSTREAM),-upstream $(UPSTREAM)) & \
	wait -n

# The Node stream-conformance clients (openai, ai) live in testenv/node; their
# Go driver (TestNodeClients) fails under CI=true if they are not installed.
# The shadow-store tests run a real redis-server: make test fails (rather
# than skipping them) when it is missing, and says how to install it.
# Network: none once `make deps` has run (modules, staticcheck, npm packages).
test: check-deps lint node-deps
	TOOLPROC_REQUIRE_REDIS=1 $(GO) test -race -count=1 ./...
	$(MAKE) --no-print-directory test-deploy
	$(MAKE) --no-print-directory e2e-processes

# The inner loop: every test of the main module once, without the race
# detector, lint, npm or the deploy module; packages whose code and inputs
# did not change come from go test's cache. The Redis and Node tests run
# when redis-server and testenv/node/node_modules are there, else skip.
# Cold: 3 minutes of CPU on 2 cores; nothing changed: about 10 s.
test-quick:
	$(GO) test ./...

# Everything make test fetches, once: the modules of both Go modules, the
# staticcheck binary and the npm packages. Afterwards make test needs no
# network (go test, go vet and the race detector build from the module
# cache; lint runs the installed staticcheck; node-deps skips npm ci while
# node_modules matches package-lock.json).
deps: $(STATICCHECK_BIN)
	$(GO) mod download
	cd deploy && $(GO) mod download
	$(MAKE) --no-print-directory node-deps

# deploy/ is its own Go module (Helm, Kubernetes and CRD validation stay out of the main
# module's dependencies), so ./... above skips it. Its tests render the Helm chart and
# validate every object; no cluster, no network (deploy/README.md). No -race: its code is
# single-threaded test code, and the race build of the Kubernetes libraries costs minutes.
test-deploy:
	cd deploy && $(GO) test -count=1 ./...

check-deps:
	@command -v redis-server >/dev/null 2>&1 || { echo "redis-server not found; install it: apt-get install -y redis-server"; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "npm not found; install it: apt-get install -y nodejs npm"; exit 1; }

# npm ci only when node_modules is missing or older than the lock file (npm
# writes node_modules/.package-lock.json); --prefer-offline takes packages
# from npm's cache without asking the registry.
NODE_MODULES := testenv/node/node_modules/.package-lock.json
node-deps: $(NODE_MODULES)
$(NODE_MODULES): testenv/node/package-lock.json testenv/node/package.json
	npm ci --prefix testenv/node --prefer-offline --no-audit --no-fund --loglevel=error

vet:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	cd deploy && $(GO) vet ./...

# Envoy configs against go-control-plane's protos plus the C++-only rules; the Helm chart
# and the Envoy Gateway / Istio manifests against Kubernetes types and CRD schemas.
validate:
	$(GO) test -count=1 ./envoy/
	cd deploy && $(GO) test -count=1 ./...

# End-to-end tests through the Envoy stand-in only.
e2e:
	$(GO) test -race -count=1 -run 'E2E' ./testenv/...

# The same end-to-end tests against an already-running proxy (a real Envoy, see
# envoy/e2e/, or the stand-in as its own process): PROXY is its listener,
# UPSTREAM_ADMIN the admin listener of testenv/cmd/fakeupstream behind it,
# TOOLPROC_ADMIN toolproc's admin listener (optional: /metrics checks), and the
# proxy's ext_proc body modes. toolproc must run testenv/testdata/e2e-external.yaml.
# Tests that need an in-process upstream script, config or hook skip, saying why.
PROXY ?=
UPSTREAM_ADMIN ?=
TOOLPROC_ADMIN ?=
E2E_REQUEST_BODY_MODE ?= BUFFERED
E2E_RESPONSE_BODY_MODE ?= FULL_DUPLEX_STREAMED
e2e-external:
	@mkdir -p $(BIN)
	@test -n "$(PROXY)" -a -n "$(UPSTREAM_ADMIN)" || { echo "usage: make e2e-external PROXY=http://HOST:PORT UPSTREAM_ADMIN=http://HOST:PORT [TOOLPROC_ADMIN=http://HOST:PORT]"; exit 2; }
	set -o pipefail; \
	TOOLPROC_E2E_PROXY=$(PROXY) TOOLPROC_E2E_UPSTREAM_ADMIN=$(UPSTREAM_ADMIN) TOOLPROC_E2E_ADMIN=$(TOOLPROC_ADMIN) \
	TOOLPROC_E2E_REQUEST_BODY_MODE=$(E2E_REQUEST_BODY_MODE) TOOLPROC_E2E_RESPONSE_BODY_MODE=$(E2E_RESPONSE_BODY_MODE) \
	$(GO) test -count=1 -v -run '^TestE2E' ./testenv/ | tee $(BIN)/e2e-external.log | grep -E '^ *--- (PASS|FAIL|SKIP)|^(PASS|FAIL|ok)|_test.go'
	@grep -q -- '--- PASS: TestE2EExternalMode' $(BIN)/e2e-external.log || { echo "e2e-external: the suite did not run in external mode"; exit 1; }

# External mode proved without Docker: the fake upstream, toolproc and the stand-in as
# three processes on loopback ports, then e2e-external against the stand-in.
e2e-processes: build
	$(GO) build -o $(BIN)/fakeupstream ./testenv/cmd/fakeupstream
	testenv/e2e-processes.sh $(BIN)

# Replays recorded agent sessions through the default profile at three
# windows (the model's own, each session's final request, its first request
# plus a third of its growth): turns that fit, bytes sent, the largest
# request, cost under the Anthropic and OpenAI prompt-cache models, steps,
# prefix breaks, pairing. TUNE is the tuning set (the committed sample by
# default; point it at the full tuning corpus when you have it,
# TUNE=path/to/sessions.jsonl), TEST the held-out set
# (testenv/sessions/corpus, never tuned on); HEAD a real agent's system
# prompt and tools for sessions that recorded only a stub.
TUNE ?= testenv/sessions/testdata/sample.jsonl
TEST ?= $(subst $(eval) ,$(comma),$(wildcard testenv/sessions/corpus/*.jsonl.gz))
HEAD ?= testenv/sessions/heads/openhands.json
comma := ,
bench-sessions:
	$(GO) run ./testenv/cmd/sessions -tune $(TUNE) -test "$(TEST)" -head $(HEAD) $(SESSIONS_FLAGS)

# The held-out sessions (testenv/sessions/corpus) held to issue 22's goals
# and the tiers' invariants: 10 to 20 minutes of CPU, so not in make test.
heldout:
	TOOLPROC_HELDOUT=1 $(GO) test -count=1 -timeout=90m -run '^TestSessionHeldOut$$' -v ./testenv/sessions/

# Compression quality: fact retention per class (failing tests, summaries,
# error lines, exception types, locations, paths, JSON keys, diff skeletons,
# next-step references) at 2x, 4x and 10x, with head+tail at the same bytes
# beside, on the committed samples and, when the shared corpus and sessions
# sit beside the repository, on them too. The goals are asserted.
quality:
	$(GO) test -count=1 -v -run 'TestQuality(Split|LocationCeiling|KeylessClamp|Shapes|Corpus|Sessions|SessionSample|Testdata)$$|TestGroundTruthFailingTests$$|TestRunnerFormats$$' ./filters/compress/ | grep -v '^=== '

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./...

# What toolproc costs end to end (issue 14's table): a fake upstream
# directly, the Envoy stand-in alone, and the stand-in with toolproc on a
# disabled profile and on the defaults; 2 KB, 300 KB and 1 MB bodies of
# real tool outputs, repeated and new, one client and sixteen; CPU per
# request from /proc; then the request-path Go benchmarks, benchstat-ready.
# BENCH_E2E_FLAGS=-load adds the load checks (memory fill, 1,000
# concurrent 1 MB exchanges, 500 SSE streams for 60 s, time to first byte).
BENCH_E2E_FLAGS ?=
bench-e2e: build
	$(GO) build -o $(BIN)/benche2e ./testenv/cmd/benche2e
	$(BIN)/benche2e -toolproc $(BIN)/toolproc -standin $(BIN)/standin $(BENCH_E2E_FLAGS)
	$(MAKE) --no-print-directory bench-speed

# Issue 23's CPU goal alone: new 300 KB and 1 MB bodies, one client, four
# times the table's requests, toolproc disabled and on the defaults three
# times each, alternately (the ratio of single runs moves by a fifth with
# the machine's drift); beside them, a real Claude Code session's 123
# requests turn by turn, the cost on traffic shaped like production's.
# Under a minute.
bench-e2e-cpu: build
	$(GO) build -o $(BIN)/benche2e ./testenv/cmd/benche2e
	$(BIN)/benche2e -toolproc $(BIN)/toolproc -standin $(BIN)/standin -cells 300KB-new/1,1MB-new/1,session -times 4 -rounds 3

# The request path's Go benchmarks alone (benchstat-friendly: COUNT runs).
COUNT ?= 6
bench-speed:
	$(GO) test -run='^$$' -bench='^Benchmark(Request|Rewrite|ScanOnly)$$' -benchmem -count=$(COUNT) ./extproc/
	$(GO) test -run='^$$' -bench='^Benchmark(Check|CheckToolOutputs|Parse|Unquote)' -benchmem -count=$(COUNT) ./filters/jsonsafe/ ./filters/wire/
	$(GO) test -run='^$$' -bench='^BenchmarkRewriteSession$$' -benchmem -count=$(COUNT) ./testenv/sessions/

# Short fuzzing of every fuzz target (FUZZTIME each). -timeout=0: go test's
# default 10-minute timeout would end a FUZZTIME=10m run as a failure.
fuzz:
	@set -e; for t in $$($(MAKE) -s fuzz-targets); do \
	  echo "== $$t"; $(MAKE) -s fuzz-one FUZZ_TARGET=$$t; \
	done

# Every fuzz target as package:Target, one per line (the nightly fuzz
# workflow runs each on its own runner).
fuzz-targets:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do echo "$$pkg:$$f"; done; \
	done

# One fuzz target, FUZZ_TARGET=package:Target, for FUZZTIME.
fuzz-one:
	@test -n "$(FUZZ_TARGET)" || { echo "FUZZ_TARGET=package:Target" >&2; exit 2; }
	$(GO) test -run='^$$' -fuzz='^$(lastword $(subst :, ,$(FUZZ_TARGET)))$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s -timeout=0 $(firstword $(subst :, ,$(FUZZ_TARGET)))

$(STATICCHECK_BIN):
	@mkdir -p .tools/tmp
	GOBIN=$(abspath .tools/tmp) $(GO) install $(STATICCHECK)
	mv .tools/tmp/staticcheck $@ && rmdir .tools/tmp

# GoReleaser itself (module proxy; the first run compiles it, ~10 min on 2 busy cores).
# make test checks .goreleaser.yaml offline (release_test.go); these run the real tool.
GORELEASER := github.com/goreleaser/goreleaser/v2@v2.15.1
release-check:
	$(GO) run $(GORELEASER) check
# Binaries for this machine's platform into dist/, as a release would build them (no image:
# that needs Docker).
release-snapshot:
	$(GO) run $(GORELEASER) build --snapshot --clean --single-target

lint: vet $(STATICCHECK_BIN)
	$(STATICCHECK_BIN) ./...
	cd deploy && ../$(STATICCHECK_BIN) ./...

fmt:
	gofmt -w .

clean:
	rm -rf $(BIN)
