package builtin

import (
	"strings"
	"testing"
)

// TestFixtureRunnerFails shows the runner refusing broken fixtures: ones
// it cannot parse, and ones whose want sections the call does not meet,
// each with a message that says what is wrong.
func TestFixtureRunnerFails(t *testing.T) {
	t.Parallel()
	const ws = "-- ws/a.txt --\nhello\n"
	parseErrors := []struct{ name, archive, want string }{
		{"no tool", "args: {}\n" + ws, `no "tool:" line`},
		{"unknown tool", "tool: rm_rf\n" + ws, `unknown tool "rm_rf"`},
		{"unknown key", "tool: read_file\ncolour: red\n" + ws, "colour: unknown key"},
		{"prose without #", "tool: read_file\nthis reads a file\n" + ws, "neither"},
		{"args not an object", "tool: read_file\nargs: [1]\n" + ws, "not a JSON object"},
		{"unknown section", "tool: read_file\n" + ws + "-- wants/result --\nx\n", "unknown section wants/result"},
		{"unknown want", "tool: read_file\n" + ws + "-- want/output --\nx\n", "unknown section want/output"},
		{"both wants", "tool: read_file\n" + ws + "-- want/result --\nx\n-- want/error --\ny\n", "both want/result and want/error"},
		{"path outside", "tool: read_file\n-- ws/../a.txt --\nx\n", "not a clean relative path"},
		{"bad quoting", "tool: read_file\nquoted: ws/a.txt\n" + ws, "not a Go string literal"},
		{"quoted section missing", "tool: read_file\nquoted: ws/b.txt\n" + ws, "there is no section ws/b.txt"},
		{"bad mode", "tool: read_file\nchmod: a.txt rwx\n" + ws, "not \"path octal-mode\""},
		{"unknown sentinel", "tool: read_file\nerror-is: ErrNope\n" + ws, `unknown error "ErrNope"`},
		{"engines of another tool", "tool: glob\nengines: go\n" + ws, "only grep has engines"},
		{"gone with content", "tool: read_file\n" + ws + "-- gone/a.txt --\nx\n", "must be empty"},
	}
	for _, tt := range parseErrors {
		_, err := parseFixture(tt.name, []byte(tt.archive))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: parse error = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}

	mismatches := []struct{ name, archive string }{
		{"wrong result", "tool: read_file\nargs: {\"path\":\"a.txt\"}\n" + ws + "-- want/result --\n     1\thullo\n"},
		{"no want", "tool: read_file\nargs: {\"path\":\"a.txt\"}\n" + ws},
		{"wrong error", "tool: read_file\nargs: {\"path\":\"b.txt\"}\n" + ws + "-- want/error --\nno such file\n"},
		{"error wanted", "tool: read_file\nargs: {\"path\":\"a.txt\"}\n" + ws + "-- want/error --\nfile not found: a.txt\n"},
		{"result wanted", "tool: read_file\nargs: {\"path\":\"b.txt\"}\n" + ws + "-- want/result --\n     1\thello\n"},
		{"wrong sentinel", "tool: read_file\nargs: {\"path\":\"b.txt\"}\nerror-is: ErrGitInternals\n" + ws +
			"-- want/error --\nfile not found: b.txt\n"},
		{"change not said", "tool: write_file\nargs: {\"path\":\"a.txt\",\"content\":\"bye\\n\"}\n" + ws +
			"-- want/result --\n" + writeResult},
		{"wrong after", "tool: write_file\nargs: {\"path\":\"a.txt\",\"content\":\"bye\\n\"}\n" + ws +
			"-- want/result --\n" + writeResult + "-- after/a.txt --\nbye bye\n"},
		{"after of an unchanged file", "tool: read_file\nargs: {\"path\":\"a.txt\"}\n" + ws +
			"-- want/result --\n     1\thello\n-- after/a.txt --\nhello\n"},
		{"gone that stays", "tool: read_file\nargs: {\"path\":\"a.txt\"}\n" + ws +
			"-- want/result --\n     1\thello\n-- gone/a.txt --\n"},
		{"wrong mode", "tool: read_file\nargs: {\"path\":\"a.txt\"}\nmode: a.txt 0700\n" + ws +
			"-- want/result --\n     1\thello\n"},
	}
	for _, tt := range mismatches {
		fx, err := parseFixture(tt.name, []byte(tt.archive))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		root, outside := fixtureDirs(t)
		o, err := fx.run(t.Context(), root, outside, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diffs := fx.check(o); len(diffs) == 0 {
			t.Errorf("%s: the runner found nothing wrong", tt.name)
		} else {
			t.Logf("%s:\n%s", tt.name, strings.Join(diffs, "\n"))
		}
	}

	// A wrong result is shown as a diff of the lines that differ.
	fx, err := parseFixture("diff", []byte(mismatches[0].archive))
	if err != nil {
		t.Fatal(err)
	}
	root, outside := fixtureDirs(t)
	o, err := fx.run(t.Context(), root, outside, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fx.check(o), "\n"); !strings.Contains(got, "-     1\thullo\n+     1\thello\n") {
		t.Errorf("the mismatch is not shown as a diff:\n%s", got)
	}

	// Options and arguments the tool does not know stop the fixture.
	for _, archive := range []string{
		"tool: read_file\noption: max_entries=3\nargs: {\"path\":\"a.txt\"}\n" + ws,
		"tool: read_file\nargs: {\"file\":\"a.txt\"}\n" + ws,
	} {
		fx, err := parseFixture("bad call", []byte(archive))
		if err != nil {
			t.Fatal(err)
		}
		root, outside := fixtureDirs(t)
		if _, err := fx.run(t.Context(), root, outside, ""); err == nil {
			t.Errorf("the runner ran %q", archive)
		}
	}
}

// writeResult is write_file's result for the mismatch cases above.
const writeResult = "Wrote 4 bytes to a.txt (overwritten)\n\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+bye\n"

// TestFixtureRewrite shows -update's rewrite: the header and the input
// sections are kept, the want, after and gone sections are made from the
// run (quoted where plain text would not come back byte for byte), and the
// rewritten fixture passes.
func TestFixtureRewrite(t *testing.T) {
	t.Parallel()
	archive := "# Overwrite a file with CRLF content.\ntool: write_file\nargs: {\"path\":\"a.txt\",\"content\":\"x\\r\\ny\"}\n" +
		"quoted: after/a.txt\n" +
		"-- ws/a.txt --\nold\n-- ws/b.txt --\nb\n-- want/result --\nstale\n-- after/a.txt --\n\"stale\"\n"
	fx, err := parseFixture("rewrite", []byte(archive))
	if err != nil {
		t.Fatal(err)
	}
	root, outside := fixtureDirs(t)
	o, err := fx.run(t.Context(), root, outside, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.check(o)) == 0 {
		t.Fatal("the stale fixture passed")
	}
	data := fx.rewrite(o)
	want := "# Overwrite a file with CRLF content.\ntool: write_file\nargs: {\"path\":\"a.txt\",\"content\":\"x\\r\\ny\"}\n" +
		"quoted: after/a.txt\n" +
		"-- ws/a.txt --\nold\n-- ws/b.txt --\nb\n" +
		"-- want/result --\nWrote 4 bytes to a.txt (overwritten)\n\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-old\n+x\n+y\n\\ No newline at end of file\n" +
		"-- after/a.txt --\n\"x\\r\\n\"\n\"y\"\n"
	if string(data) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", data, want)
	}
	fx, err = parseFixture("rewritten", data)
	if err != nil {
		t.Fatal(err)
	}
	root, outside = fixtureDirs(t)
	if o, err = fx.run(t.Context(), root, outside, ""); err != nil {
		t.Fatal(err)
	}
	if diffs := fx.check(o); len(diffs) > 0 {
		t.Errorf("the rewritten fixture fails:\n%s", strings.Join(diffs, "\n"))
	}
}

// TestQuotedSections round-trips texts through the quoted form.
func TestQuotedSections(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"", "a", "a\n", "one\r\ntwo\r\n", "caf\xe9\n", "\x00\x01\xff", strings.Repeat("x", 5000) + "needle" + strings.Repeat("é", 40) + "\n",
		"-- ws/a --\n", "tab\there\n\n\n", "\"quotes\" and `ticks`\n",
	} {
		got, err := unquoteBody(quoteBody(text))
		if err != nil || got != text {
			t.Errorf("round trip of %q: %q, %v", clipTo(text, 40), clipTo(got, 40), err)
		}
	}
	if got, err := unquoteBody("\"ab\" * 3 `raw\\n`\n\"\\n\""); err != nil || got != "ababab"+"raw\\n"+"\n" {
		t.Errorf("unquoteBody = %q, %v", got, err)
	}
	for _, bad := range []string{"plain text", "\"a\" * many", "'a'", "\"unclosed"} {
		if _, err := unquoteBody(bad); err == nil {
			t.Errorf("unquoteBody(%q) did not fail", bad)
		}
	}
	if needsQuoting("plain\ntext\n") || !needsQuoting("no final newline") || !needsQuoting("cr\r\n") || !needsQuoting("-- marker --\n") {
		t.Error("needsQuoting is wrong")
	}
}
