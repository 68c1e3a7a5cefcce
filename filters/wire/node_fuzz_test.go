package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// nodeRawSeeds are bytes no check accepted, cut where the walker used to
// read past them (review round 3, U3): literals and strings that end
// early, keys without a colon or a value, a lone quote, closers without
// openers.
var nodeRawSeeds = []string{
	``, ` `, `{`, `[`, `"`, `t`, `{"`, `{"a"`, `{"a":`, `{"a" `, `{"a":t`, `{"a":f`, `{"a":n`,
	`[t`, `[f`, `[nu`, `["`, `["a`, `["a\"]`, `{"a\"}`, `{"a":"b`, `{"a":"b\\`, `{"a"x1}`, `{1:2}`,
	`[,,,]`, `[:`, `}}}]]]`, `[[[[[[[[`, `{"a":[{"b":[{"c":`, `{"":{"":{"":"`, `[{"a":1},{"b":`,
	`{"stream":tru`, `{"stream_options":{"include_usage":`, `{"tools":[{"name":"expand_context"`,
	`{"messages":[{"role":"user","content":"x"}],"stream":true}`, `[1e5,-0.5,"\u00e9",null,false,true,{}]`,
}

// FuzzNodeRaw feeds the node walker bytes nobody validated: it never
// panics or reads outside them, every node's Raw is the slice of the body
// at its Index and inside its parent, every ForEach ends having called fn
// at most once per byte, and on bytes the check accepts it reads what gjson
// reads. The entry points that trust an earlier check (topGetter,
// InjectExpandToolValid) get the same bytes.
func FuzzNodeRaw(f *testing.F) {
	for _, s := range nodeRawSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		valid := jsonsafe.Valid(body)
		root := rootNode(body)
		var want gjson.Result
		if valid {
			want = gjson.ParseBytes(body)
			// gjson's root container runs to the end of the input,
			// whitespace after it included; a node ends at its bracket.
			if want.Type == gjson.JSON {
				want.Raw = strings.TrimRight(want.Raw, " \t\r\n")
			}
		}
		walkRaw(t, body, root, want, valid)
		walkRaw(t, body, indexed(root), want, valid)

		get := topGetter(rootNode(body))
		for _, p := range []string{"stream", "stream_options.include_usage", "tools.0.name", "tool_choice", "messages.#"} {
			_ = get(p)
		}
		_ = askOf(Endpoint{}, get)
		_ = expandBlocked(Endpoint{}, ClientAsk{}, get)
		for _, d := range Dialects {
			out, changed, err := InjectExpandToolValid(d, body)
			if valid && err == nil && changed && !jsonsafe.Valid(out) {
				t.Fatalf("%s: injecting into valid JSON gave invalid JSON:\n%s", d, out)
			}
		}
	})
}

// walkRaw visits n and its descendants (iteratively, 64 levels, 4096
// nodes), checking that every node lies inside the body and its parent.
// On valid bodies w is gjson's reading of n and each child is compared.
func walkRaw(t *testing.T, body []byte, n node, w gjson.Result, valid bool) {
	t.Helper()
	type item struct {
		n     node
		w     gjson.Result
		depth int
	}
	stack := []item{{n, w, 0}}
	for visited := 0; len(stack) > 0 && visited < 4096; visited++ {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		inside(t, body, n, "node")
		_, _, _, _ = n.String(), n.Bool(), n.Int(), n.IsArray()
		for _, p := range []string{"a", "0", "a.0.b", "content.0"} {
			inside(t, body, n.Get(p), "Get("+p+")")
		}
		if c := n.Get("#"); !n.IsArray() {
			inside(t, body, c, "Get(#)") // a member named "#"
		} else if c.Int() < 0 || c.Int() > int64(len(n.Raw)) {
			t.Fatalf("Get(#) = %q for %q", c.Raw, n.Raw)
		}
		if n.IsObject() {
			inside(t, body, indexed(n), "indexed")
		}
		if valid && (n.Type != it.w.Type || n.Raw != it.w.Raw) {
			t.Fatalf("node %v %q, gjson %v %q", n.Type, n.Raw, it.w.Type, it.w.Raw)
		}
		// gjson's children as key, value pairs (its ForEach over a scalar
		// visits the scalar itself, so only containers have any).
		var want []gjson.Result
		if valid && it.w.Type == gjson.JSON {
			it.w.ForEach(func(k, v gjson.Result) bool { want = append(want, k, v); return true })
		}
		calls, k := 0, 0
		n.ForEach(func(key, v node) bool {
			calls++
			if calls > len(n.Raw) {
				t.Fatalf("ForEach over %d bytes called fn %d times", len(n.Raw), calls)
			}
			inside(t, body, v, "child")
			if v.Raw == "" || v.Index < n.Index || v.Index+len(v.Raw) > n.Index+len(n.Raw) {
				t.Fatalf("child %q at %d outside its parent %q at %d", v.Raw, v.Index, n.Raw, n.Index)
			}
			if key.Exists() {
				inside(t, body, key, "key")
				_ = key.String()
			}
			var wv gjson.Result
			if valid {
				if k+1 >= len(want) {
					t.Fatalf("more children than gjson reads in %q", n.Raw)
				}
				if n.IsObject() && key.String() != want[k].Str {
					t.Fatalf("key %q, gjson %q", key.String(), want[k].Str)
				}
				wv = want[k+1]
				k += 2
			}
			if it.depth < 64 {
				stack = append(stack, item{v, wv, it.depth + 1})
			}
			return true
		})
		if valid && k != len(want) {
			t.Fatalf("%d children of %q, gjson reads %d", k/2, n.Raw, len(want)/2)
		}
	}
}

// inside: an empty node, or the bytes of the body at its Index.
func inside(t *testing.T, body []byte, n node, what string) {
	t.Helper()
	if n.Raw == "" {
		return
	}
	if n.Index < 0 || n.Index+len(n.Raw) > len(body) || string(body[n.Index:n.Index+len(n.Raw)]) != n.Raw {
		t.Fatalf("%s %q at %d is not the body's bytes there (body %d bytes)", what, n.Raw, n.Index, len(body))
	}
}

// The review's reading of the walker over unchecked bytes: literals cut
// short, an unterminated string, a lone quote as a key. Each used to read
// past the end (a panic) or drop a byte.
func TestNodeRawCutShort(t *testing.T) {
	for _, s := range nodeRawSeeds {
		body := []byte(s)
		walkRaw(t, body, rootNode(body), gjson.Result{}, false)
		walkRaw(t, body, indexed(rootNode(body)), gjson.Result{}, false)
	}
	if got := rootNode([]byte(`["abc`)).Get("0").String(); got != "abc" {
		t.Errorf("unterminated string read as %q, want every byte (abc)", got)
	}
	if got := rootNode([]byte(`{"stream":t`)).Get("stream").Raw; got != "t" {
		t.Errorf("cut literal read as %q", got)
	}
	deep := strings.Repeat(`{"a":[`, 100000)
	if n := rootNode([]byte(deep)).Get("a.0.a.0.a"); !n.IsArray() || n.Index != 17 || n.Index+len(n.Raw) != len(deep) {
		t.Errorf("deep unterminated nesting: %d bytes at %d", len(n.Raw), n.Index)
	}
}
