package compress

import (
	"os"
	"strings"
	"testing"
)

// TestLineNotesChangeNothing: compressing through what detection noted of
// each line gives the bytes reading every line afresh gives, on every
// sample output, as the shell and the tools that made them call them, at
// the ratios the quality method measures and at the filter's default.
func TestLineNotesChangeNothing(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	hints := []Hint{
		{},
		{ToolName: "bash", Args: `{"command":"python3 run.py"}`},
		{ToolName: "bash", Args: `{"command":"make check"}`},
		{ToolName: "Read", Args: `{"file_path":"/tmp/build.log"}`},
	}
	compared := 0
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		text := readTestdata(t, e.Name())
		for _, h := range hints {
			for _, opts := range []StructuralOptions{{TargetRatio: 4}, {TargetRatio: 10}, {}} {
				noted := Structural(opts)
				plain := structural{opts: noted.(structural).opts, unnoted: true}
				a, _ := noted.Compress(text, h)
				b, _ := plain.Compress(text, h)
				if a != b {
					t.Fatalf("%s, %+v, %+v: the notes changed the output", e.Name(), h, opts)
				}
				compared++
			}
		}
	}
	if compared < 50 {
		t.Fatalf("compared %d outputs", compared)
	}
}

// TestLineNotesAreRead: the classifier of a traceback detected by its
// content takes detection's scan of nearly every line instead of reading
// it again, and none of a line the scan read changed (a log prefix cut
// off) or of another text.
func TestLineNotesAreRead(t *testing.T) {
	text := readTestdata(t, "py_traceback.txt")
	h := Hint{ToolName: "bash", Args: `{"command":"python3 inventory.py"}`}
	var notes lineNotes
	kind := detect(text, h, true, &notes)
	if kind != KindTraceback {
		t.Fatalf("detected %s", kind)
	}
	p := newPlan(text, kind, StructuralOptions{TargetBytes: 2000}.withDefaults())
	p.cleanView()
	read, lines := 0, 0
	for i, l := range p.allViews() {
		lines++
		if f, _ := notes.noteOf(p, i, l); f != 0 {
			read++
			if f&errAsked == 0 {
				t.Fatalf("line %d noted without its error verdict", i)
			}
		}
		// The same bytes elsewhere are not this line.
		if c := strings.Clone(l); c != "" {
			if f, _ := notes.noteOf(p, i, c); f != 0 {
				t.Fatalf("line %d: a copy of it took its note", i)
			}
		}
	}
	if read*10 < lines*9 {
		t.Fatalf("%d of %d lines read through the notes", read, lines)
	}

	// A CI job's log is read through its prefixes: the scan reads each line
	// without its prefix, which is not the line as it stands, and notes
	// none.
	var ci strings.Builder
	for range 30 {
		ci.WriteString("test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0047503Z error: cannot find symbol Foo\n")
	}
	var cinotes lineNotes
	if prefixOf(ci.String()) == noPrefix {
		t.Fatal("the CI log is not read through its prefixes")
	}
	detect(ci.String(), Hint{}, true, &cinotes)
	if len(cinotes.v) != 0 {
		t.Fatalf("%d lines read through their prefixes were noted", len(cinotes.v))
	}
}
