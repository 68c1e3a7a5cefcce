package extproc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
)

// pytestLog200K is a pytest -v run of about 200 KB: thousands of passing
// tests first, then three failures with their reports, the short summary
// and the final count, the shape of a SWE-bench harness log.
func pytestLog200K() string {
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\n" +
		"platform linux -- Python 3.9.20, pytest-8.3.3, pluggy-1.5.0 -- /opt/miniconda3/envs/testbed/bin/python\n" +
		"rootdir: /testbed\nconfigfile: setup.cfg\ncollecting ... collected 2403 items\n\n")
	for i := 0; i < 2400; i++ {
		fmt.Fprintf(&b, "astropy/units/tests/test_quantity_array_methods.py::TestQuantityStatFuncs::test_case_%04d PASSED [%3d%%]\n", i, i*100/2403)
	}
	for _, n := range []int{17, 904, 2311} {
		fmt.Fprintf(&b, "astropy/units/tests/test_format.py::test_cds_units[%d] FAILED [ 99%%]\n", n)
	}
	b.WriteString("\n=================================== FAILURES ===================================\n")
	for _, n := range []int{17, 904, 2311} {
		fmt.Fprintf(&b, "____________________________ test_cds_units[%d] _____________________________\n\n", n)
		b.WriteString("    def test_cds_units(unit):\n>       assert u.Unit(unit.to_string(\"cds\"), format=\"cds\") == unit\n")
		fmt.Fprintf(&b, "E       ValueError: '10+3J/m/s/kpc2' did not parse as cds unit: Syntax error (case %d)\n\n", n)
		b.WriteString("astropy/units/format/cds.py:320: ValueError\n")
	}
	b.WriteString("=========================== short test summary info ============================\n")
	for _, n := range []int{17, 904, 2311} {
		fmt.Fprintf(&b, "FAILED astropy/units/tests/test_format.py::test_cds_units[%d] - ValueError: '10+3J/m/s/kpc2' did not parse\n", n)
	}
	b.WriteString("======================== 3 failed, 2400 passed in 41.27s ========================\n")
	return b.String()
}

// TestKeylessClampCutsByStructure: a request toolproc cannot give
// references to (no credential, or compression off) still gets
// a 200 KB pytest log cut by what it reports: every failing test, the
// error lines and the summary, within the clamp's limits, with the cut
// marked in-band. With clamp.structural off the same log is cut after its
// head, and none of them survive.
func TestKeylessClampCutsByStructure(t *testing.T) {
	log := pytestLog200K()
	if len(log) < 200_000 {
		t.Fatalf("log is %d bytes", len(log))
	}
	body := openAIBody(log)
	for _, c := range []struct {
		name       string
		yaml       string
		structural bool
	}{
		{"keyless, default profile", "store: {keyless_references: false}", true},
		{"compression off", clampOnly, true},
		{"structural off", "store: {keyless_references: false}\nprofiles: {default: {compress: {enabled: false}, clamp: {structural: false}}}", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testServer(t, c.yaml)
			x := newTestExchange(s)
			x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "content-length", fmt.Sprint(len(body))))
			r := x.handle(reqBody(body, true))
			out := r[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
			assertClamped(t, body, out)
			content := gjson.GetBytes(out, "messages.2.content").String()
			want := []string{
				"FAILED astropy/units/tests/test_format.py::test_cds_units[17]",
				"FAILED astropy/units/tests/test_format.py::test_cds_units[904]",
				"FAILED astropy/units/tests/test_format.py::test_cds_units[2311]",
				"E       ValueError: '10+3J/m/s/kpc2' did not parse as cds unit",
				"3 failed, 2400 passed in 41.27s",
			}
			for _, w := range want {
				if strings.Contains(content, w) != c.structural {
					t.Errorf("%q kept: %v, want %v", w, !c.structural, c.structural)
				}
			}
			if c.structural {
				if !strings.Contains(content, " lines omitted: ") || !strings.HasSuffix(content, "by what it reports; omitted lines are marked above]") {
					t.Errorf("cut not marked in-band:\n%.2000s", content)
				}
				if len(content) > clamp.DefaultMaxBytes || clamp.CountLines(content) > clamp.DefaultMaxLines {
					t.Errorf("over the limits: %d bytes, %d lines", len(content), clamp.CountLines(content))
				}
			}
		})
	}
}
