package main

import (
	"slices"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestRunOrderAlternatesTheLastTwo(t *testing.T) {
	if got, want := runOrder(4, 1), []int{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("one round: %v, want %v", got, want)
	}
	if got, want := runOrder(4, 3), []int{0, 1, 2, 3, 2, 3, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("three rounds: %v, want %v", got, want)
	}
}

func TestAddResultWeighsRoundsByRequests(t *testing.T) {
	var rs []result
	for ci := range 4 {
		rs = addResult(rs, ci, result{requests: 100, toolprocCPU: time.Duration(ci) * time.Millisecond, p50: time.Second})
	}
	rs = addResult(rs, 3, result{requests: 300, toolprocCPU: 7 * time.Millisecond, errors: 2, p50: time.Minute})
	got := rs[3]
	// (100×3 ms + 300×7 ms) / 400 = 6 ms
	if got.toolprocCPU != 6*time.Millisecond || got.requests != 400 || got.errors != 2 {
		t.Errorf("merged: cpu %v requests %d errors %d, want 6ms 400 2", got.toolprocCPU, got.requests, got.errors)
	}
	if got.p50 != time.Second {
		t.Errorf("p50 %v: the first round's latency is the one reported", got.p50)
	}
	if !slices.Equal(got.perRound, []time.Duration{3 * time.Millisecond, 7 * time.Millisecond}) {
		t.Errorf("per round %v", got.perRound)
	}
	lo, hi, ok := roundRatios([]time.Duration{time.Millisecond, 2 * time.Millisecond}, []time.Duration{4 * time.Millisecond, 10 * time.Millisecond})
	if !ok || lo != 4 || hi != 5 {
		t.Errorf("round ratios %v–%v %v, want 4–5", lo, hi, ok)
	}
	if _, _, ok := roundRatios([]time.Duration{time.Millisecond}, []time.Duration{time.Millisecond}); ok {
		t.Error("one round has no range")
	}
}

func TestCellFilter(t *testing.T) {
	newSmall := &cell{name: "300 KB", fresh: true, conc: 1}
	newSmall16 := &cell{name: "300 KB", fresh: true, conc: 16}
	repeated := &cell{name: "300 KB", conc: 1}
	tiny := &cell{name: "2 KB", conc: 16}
	session := &cell{name: "session", turns: true, conc: 1}
	for _, tc := range []struct {
		list string
		want []bool // newSmall, newSmall16, repeated, tiny, session
	}{
		{"", []bool{true, true, true, true, true}},
		{"300KB-new", []bool{true, true, false, false, false}},
		{"300KB-new/1, 2KB", []bool{true, false, false, true, false}},
		{"300KB/1", []bool{false, false, true, false, false}},
		{"session,1MB-new/1", []bool{false, false, false, false, true}},
	} {
		keep, err := cellFilter(tc.list)
		if err != nil {
			t.Fatalf("%q: %v", tc.list, err)
		}
		var got []bool
		for _, c := range []*cell{newSmall, newSmall16, repeated, tiny, session} {
			got = append(got, keep(c))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.list, got, tc.want)
		}
	}
	for _, bad := range []string{"300KB-old", "1MB/8", "2KB/x", "sessions"} {
		if _, err := cellFilter(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLoadSession: the session cell sends every OpenAI Chat request of the
// file in order, each a prefix of the next, and its size is their mean.
func TestLoadSession(t *testing.T) {
	c := &cell{name: "session", turns: true, conc: 1}
	if err := c.loadSession("../../sessions/testdata/sample.jsonl"); err != nil {
		t.Fatal(err)
	}
	if c.count != len(c.bodies) || c.count < 40 {
		t.Fatalf("%d requests (count %d)", len(c.bodies), c.count)
	}
	total := 0
	for _, b := range c.bodies {
		total += len(b)
	}
	if c.size != total/len(c.bodies) {
		t.Fatalf("size %d, mean %d", c.size, total/len(c.bodies))
	}
	// Within a session each request carries the one before it: its
	// message list starts with the earlier list's messages.
	first, second := gjson.GetBytes(c.bodies[0], "messages").Array(), gjson.GetBytes(c.bodies[1], "messages").Array()
	if len(second) <= len(first) || second[len(first)-1].Raw != first[len(first)-1].Raw {
		t.Fatalf("the second request does not extend the first (%d then %d messages)", len(first), len(second))
	}
	if err := (&cell{}).loadSession("no-such-file.jsonl"); err == nil {
		t.Fatal("a missing file was accepted")
	}
}
