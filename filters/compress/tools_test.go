package compress

import (
	"slices"
	"testing"
)

func TestCategories(t *testing.T) {
	want := []string{"bash", "edit", "glob", "grep", "read", "write"}
	if got := Categories(); !slices.Equal(got, want) {
		t.Fatalf("Categories() = %v, want %v", got, want)
	}
}

// Each category must cover the names every supported agent sends.
func TestCategoryTools(t *testing.T) {
	want := map[string][]string{
		"read": {"Read", "NotebookRead", "read_file", "read"},
		"edit": {"Edit", "MultiEdit", "NotebookEdit", "apply_patch", "edit",
			"replace_string_in_file", "multi_replace_string_in_file", "insert_edit_into_file", "edit_notebook_file"},
		"write": {"Write", "write", "create_file"},
		"bash": {"Bash", "BashOutput", "PowerShell", "shell", "shell_command", "local_shell", "exec_command",
			"write_stdin", "exec", "process", "bash", "run_in_terminal", "get_terminal_output"},
		"glob": {"Glob", "LS", "list_dir", "find", "ls", "file_search"},
		"grep": {"Grep", "grep_files", "grep", "grep_search"},
	}
	for cat, names := range want {
		got := CategoryTools(cat)
		if !slices.IsSorted(got) {
			t.Errorf("CategoryTools(%q) not sorted: %v", cat, got)
		}
		exp := slices.Clone(names)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Errorf("CategoryTools(%q) = %v, want %v", cat, got, exp)
		}
		set := NewSkipSet([]string{cat})
		for _, n := range names {
			if !set.Skips(n) {
				t.Errorf("category %q does not skip %q", cat, n)
			}
		}
	}
	if got := CategoryTools("Read "); len(got) != 4 {
		t.Errorf("CategoryTools is not case- and space-insensitive: %v", got)
	}
	if got := CategoryTools("Read_file"); got != nil {
		t.Errorf("CategoryTools(non-category) = %v, want nil", got)
	}
	// The caller may change what it got without changing the table.
	CategoryTools("read")[0] = "x"
	if CategoryTools("read")[0] == "x" {
		t.Error("CategoryTools shares its slice")
	}
}

func TestSkipSet(t *testing.T) {
	s := NewSkipSet([]string{"READ", " Edit ", "my_tool", "mcp__db__query", ""})
	tests := []struct {
		tool string
		want bool
	}{
		{"Read", true},
		{"read_file", true},
		{"read", true},
		{"MultiEdit", true},
		{"apply_patch", true},
		{"my_tool", true},
		{"mcp__db__query", true},
		// Not asked for.
		{"Bash", false},
		{"Write", false},
		{"Grep", false},
		// Exact names: case matters and MCP prefixes are not stripped.
		{"READ", false},
		{"My_tool", false},
		{"mcp__fs__Read", false},
		{"mcp__fs__read_file", false},
		// Unknown tool (its call is not in the request, as with Responses'
		// previous_response_id): it may be a read, so it is left alone
		// (review finding 12).
		{"", true},
	}
	for _, tt := range tests {
		if got := s.Skips(tt.tool); got != tt.want {
			t.Errorf("Skips(%q) = %v, want %v", tt.tool, got, tt.want)
		}
	}
}

func TestSkipSetEmpty(t *testing.T) {
	var zero SkipSet
	for _, s := range []SkipSet{zero, NewSkipSet(nil), NewSkipSet([]string{" ", ""})} {
		if s.Skips("Read") || s.Skips("") {
			t.Error("an empty SkipSet skips")
		}
	}
}

// An exact name that is not a category stays exact, even if it looks like
// one in another case: only the six category words expand.
func TestSkipSetExactNameNotExpanded(t *testing.T) {
	s := NewSkipSet([]string{"read_file", "Bash"})
	if !s.Skips("read_file") || s.Skips("Read") || s.Skips("read") {
		t.Error("read_file should match only itself")
	}
	// "Bash" is the bash category (case-insensitive), so it expands.
	if !s.Skips("exec_command") || !s.Skips("run_in_terminal") {
		t.Error("Bash should expand to the bash category")
	}
}
