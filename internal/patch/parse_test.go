package patch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []FileOp
	}{
		{
			name: "all kinds",
			text: `*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+body
*** Delete File: old.txt
*** Update File: src/a.go
*** Move to: src/b.go
@@ func main() {
 	a()
-	b()
+	c()
*** End Patch`,
			want: []FileOp{
				{Kind: Add, Path: "docs/new.md", Lines: []string{"# Title", "", "body"}, Line: 2},
				{Kind: Delete, Path: "old.txt", Line: 6},
				{Kind: Update, Path: "src/a.go", MoveTo: "src/b.go", Line: 7, Hunks: []Hunk{{
					Context: []string{"func main() {"},
					Lines:   []Line{{LineContext, "\ta()"}, {LineRemoved, "\tb()"}, {LineAdded, "\tc()"}},
					Line:    9,
				}}},
			},
		},
		{
			name: "padding, heredoc and crlf",
			text: "\n  <<'EOF'\r\n  *** Begin Patch  \r\n  *** Delete File:   a b.txt  \r\n*** End Patch \r\nEOF\n\n",
			want: []FileOp{{Kind: Delete, Path: "a b.txt", Line: 4}},
		},
		{
			name: "markdown fence",
			text: "```\n*** Begin Patch\n*** Delete File: x\n*** End Patch\n```",
			want: []FileOp{{Kind: Delete, Path: "x", Line: 3}},
		},
		{
			name: "first hunk without @@, stacked anchors, eof",
			text: `*** Begin Patch
*** Update File: f.py
 import os
+import sys
@@ class A:
@@     def f(self):
-        pass
+        return 1
@@
-x
+y
*** End of File
*** End Patch`,
			want: []FileOp{{Kind: Update, Path: "f.py", Line: 2, Hunks: []Hunk{
				{Lines: []Line{{LineContext, "import os"}, {LineAdded, "import sys"}}, Line: 3},
				{Context: []string{"class A:", "    def f(self):"}, Lines: []Line{{LineRemoved, "        pass"}, {LineAdded, "        return 1"}}, Line: 5},
				{Lines: []Line{{LineRemoved, "x"}, {LineAdded, "y"}}, EOF: true, Line: 9},
			}}},
		},
		{
			name: "blank lines: inside kept, trailing dropped; lenient context; no-newline marker",
			text: "*** Begin Patch\n*** Update File: f\n@@ -3,4 +3,4 @@\n a\n\n-b\n+c\nbare\n\\ No newline at end of file\n\n\n*** Add File: g\n+1\n\n+3\n\n*** End Patch",
			want: []FileOp{
				{Kind: Update, Path: "f", Line: 2, Hunks: []Hunk{{
					Lines: []Line{{LineContext, "a"}, {LineContext, ""}, {LineRemoved, "b"}, {LineAdded, "c"}, {LineContext, "bare"}},
					Line:  3,
				}}},
				{Kind: Add, Path: "g", Lines: []string{"1", "", "3"}, Line: 12},
			},
		},
		{
			name: "pure rename",
			text: "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch",
			want: []FileOp{{Kind: Update, Path: "a", MoveTo: "b", Line: 2}},
		},
		{
			name: "empty add and context marker inside a context line",
			text: "*** Begin Patch\n*** Add File: empty\n*** Update File: doc.md\n@@\n *** Begin Patch\n-old\n+new\n*** End Patch",
			want: []FileOp{
				{Kind: Add, Path: "empty", Line: 2},
				{Kind: Update, Path: "doc.md", Line: 3, Hunks: []Hunk{{
					Lines: []Line{{LineContext, "*** Begin Patch"}, {LineRemoved, "old"}, {LineAdded, "new"}},
					Line:  4,
				}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Ops, tt.want) {
				t.Errorf("ops:\n%+v\nwant:\n%+v", p.Ops, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want string
	}{
		{"empty", "  \n", `line 1: the patch is empty; expected "*** Begin Patch"`},
		{"no begin", "hello\n*** End Patch", `line 1: expected "*** Begin Patch", got "hello"`},
		{"cut off", "*** Begin Patch\n*** Update File: a\n@@\n-x", `line 4: expected "*** End Patch" as the last line, got "-x" (was the patch cut off?)`},
		{"only begin", "*** Begin Patch", `line 1: expected "*** End Patch" as the last line`},
		{"no ops", "*** Begin Patch\n\n*** End Patch", `line 3: the patch has no file operations`},
		{"junk op", "*** Begin Patch\nmodify a.go\n*** End Patch", `line 2: expected a file operation ("*** Add File: path", "*** Update File: path" or "*** Delete File: path"), got "modify a.go"`},
		{"unknown marker", "*** Begin Patch\n*** Rename File: a\n*** End Patch", `line 2: unknown marker "*** Rename File: a"`},
		{"add without plus", "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch", `line 4: expected a line starting with '+' (a line of a)`},
		{"missing path", "*** Begin Patch\n*** Delete File:  \n*** End Patch", `line 2: expected a path after the delete marker`},
		{"update without hunks", "*** Begin Patch\n*** Update File: a\n*** End Patch", `line 2: the update of a has no hunks; expected a line starting with @@ after it`},
		{"empty hunk", "*** Begin Patch\n*** Update File: a\n@@ x\n\n*** End Patch", `line 3: the hunk has no lines`},
		{"second hunk without @@", "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n-y\n*** End Patch", `line 6: expected a hunk starting with @@, got "-y"`},
		{"eof marker first", "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch", `line 4: "*** End of File" must follow the lines of a hunk`},
		{"unknown marker in hunk", "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** Move to: b\n*** End Patch", `line 5: unknown marker "*** Move to: b"`},
		{"empty move", "*** Begin Patch\n*** Update File: a\n*** Move to:\n*** End Patch", `line 3: expected a path after the "*** Move to:" marker`},
		{"two patches", "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Begin Patch\n*** Delete File: b\n*** End Patch", `line 3: "*** End Patch" before the last line`},
		{"long line quoted short", "*** Begin Patch\n" + strings.Repeat("é", 100) + "\n*** End Patch", "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%s\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
}

func TestFileOpContent(t *testing.T) {
	t.Parallel()
	if got := (FileOp{}).Content(); got != "" {
		t.Errorf("empty content = %q", got)
	}
	if got := (FileOp{Lines: []string{"a", ""}}).Content(); got != "a\n\n" {
		t.Errorf("content = %q", got)
	}
	h := Hunk{Lines: []Line{{LineContext, "c"}, {LineRemoved, "r"}, {LineAdded, "a"}}}
	if old, nw := h.Old(), h.New(); !reflect.DeepEqual(old, []string{"c", "r"}) || !reflect.DeepEqual(nw, []string{"c", "a"}) {
		t.Errorf("Old, New = %q, %q", old, nw)
	}
	if Add.String() != "add" || Kind(9).String() != "Kind(9)" {
		t.Errorf("Kind.String is wrong")
	}
}
