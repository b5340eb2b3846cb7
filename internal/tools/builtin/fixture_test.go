package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/patch"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// The fixture runner, after gopls's marker tests: each
// testdata/fixtures/<tool>/*.txtar is one call of a file tool on a
// workspace of its own, with the result or error and the workspace after
// it written out as sections of the archive. The format is in
// testdata/fixtures/README.md. What a fixture cannot say — sequences of
// calls on one session's guard, races, generated files of megabytes, an
// editor's buffers, rg's fallback — stays in Go tests.
//
// The archives are read with golang.org/x/tools/txtar, the format's
// reference implementation (x/tools is already in go.mod, for the
// staticcheck tool).

var update = flag.Bool("update", false, "rewrite the want, after and gone sections of testdata/fixtures from what the tools did")

// errorSentinels are the errors an error-is line may name.
var errorSentinels = map[string]error{
	"ErrOutsideWorkspace": tools.ErrOutsideWorkspace,
	"ErrGitInternals":     tools.ErrGitInternals,
}

// fixtureTools builds the tools a fixture may call, with the settings of
// its option lines; engine is grep's ("go" or "rg"), "" for the others.
var fixtureTools = map[string]func(opts map[string]int, engine string) (tools.Tool, error){
	"read_file": func(opts map[string]int, _ string) (tools.Tool, error) {
		t := newReadFile()
		return t, setOptions(opts, map[string]*int{"max_lines": &t.maxLines, "max_bytes": &t.maxBytes})
	},
	"list_dir": func(opts map[string]int, _ string) (tools.Tool, error) {
		t := newListDir()
		return t, setOptions(opts, map[string]*int{"max_entries": &t.maxEntries})
	},
	"glob": func(opts map[string]int, _ string) (tools.Tool, error) {
		t := newGlob()
		return t, setOptions(opts, map[string]*int{"max_results": &t.maxResults})
	},
	"grep": func(opts map[string]int, engine string) (tools.Tool, error) {
		t := newGrep()
		switch engine {
		case "go":
			t.rg = ""
		case "rg":
			rg, err := exec.LookPath("rg")
			if err != nil {
				return nil, errEngineMissing
			}
			t.rg, t.goFallback = rg, false
		default:
			return nil, fmt.Errorf("unknown grep engine %q", engine)
		}
		return t, setOptions(opts, map[string]*int{"max_bytes": &t.maxBytes, "count_limit": &t.countLimit})
	},
	"write_file": func(opts map[string]int, _ string) (tools.Tool, error) {
		return newWriteFile(), setOptions(opts, nil)
	},
	"edit_file": func(opts map[string]int, _ string) (tools.Tool, error) {
		return newEditFile(), setOptions(opts, nil)
	},
	"apply_patch": func(opts map[string]int, _ string) (tools.Tool, error) {
		return newApplyPatch(), setOptions(opts, nil)
	},
}

// errEngineMissing is a grep engine the machine lacks.
var errEngineMissing = errors.New("ripgrep (rg) not on PATH")

// setOptions sets the named fields from a fixture's option lines.
func setOptions(opts map[string]int, fields map[string]*int) error {
	for name, v := range opts {
		p := fields[name]
		if p == nil {
			return fmt.Errorf("unknown option %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		*p = v
	}
	return nil
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(file), "testdata/fixtures/"), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fx := readFixture(t, file)
			if dir := path.Base(path.Dir(filepath.ToSlash(file))); dir != fx.tool {
				t.Fatalf("%s is in the directory of %s but calls %s", file, dir, fx.tool)
			}
			engines := fx.engineList()
			if len(engines) == 1 && engines[0] == "" {
				checkFixture(t, fx, "", *update)
				return
			}
			for i, engine := range engines {
				// One after the other: the first engine's -update is
				// what the next is checked against.
				t.Run(engine, func(t *testing.T) {
					checkFixture(t, fx, engine, *update && i == 0)
				})
				fx = readFixture(t, file)
			}
		})
	}
}

// readFixture reads and parses a fixture, failing the test if it cannot.
func readFixture(t *testing.T, file string) *fixture {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := parseFixture(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// engineList is the engines a fixture runs on: grep's two unless it
// names some, one unnamed engine for other tools.
func (fx *fixture) engineList() []string {
	switch {
	case fx.tool != "grep":
		return []string{""}
	case len(fx.engines) > 0:
		return fx.engines
	}
	return []string{"go", "rg"}
}

// checkFixture runs fx on fresh directories and reports every way the
// run differs from it; with rewrite, it first rewrites the fixture's file
// from the run.
func checkFixture(t *testing.T, fx *fixture, engine string, rewrite bool) {
	t.Helper()
	root, outside := fixtureDirs(t)
	o, err := fx.run(t.Context(), root, outside, engine)
	if errors.Is(err, errEngineMissing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rewrite {
		data := fx.rewrite(o)
		if err := os.WriteFile(fx.file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if fx, err = parseFixture(fx.file, data); err != nil {
			t.Fatalf("the rewritten fixture does not parse: %v", err)
		}
	}
	for _, p := range fx.check(o) {
		t.Errorf("%s:\n%s", fx.file, p)
	}
}

// fixtureDirs returns a fresh workspace root and a directory outside it,
// both with symlinks resolved.
func fixtureDirs(t *testing.T) (root, outside string) {
	t.Helper()
	var dirs [2]string
	for i := range dirs {
		d, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = d
	}
	return dirs[0], dirs[1]
}

// outcome is what a fixture's call did.
type outcome struct {
	result   string
	callErr  error
	errText  string            // callErr's text with the directories as placeholders
	after    map[string]string // workspace files changed or created, by path
	gone     []string          // workspace paths that existed and do not now
	problems []string          // failures no want section can express
}

// run sets up the workspace in root (and the outside files in outside),
// makes the call and records what it did. An error is a fixture that
// cannot run.
func (fx *fixture) run(ctx context.Context, root, outside, engine string) (*outcome, error) {
	tool, err := fixtureTools[fx.tool](fx.options, engine)
	if err != nil {
		return nil, err
	}
	if err := fx.setUp(root, outside); err != nil {
		return nil, fmt.Errorf("set up the workspace: %w", err)
	}
	before, err := snapshot(root)
	if err != nil {
		return nil, err
	}
	outBefore, err := snapshot(outside)
	if err != nil {
		return nil, err
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		return nil, err
	}
	env := &tools.Env{Workspace: ws, SessionID: "fixture"}
	if len(fx.hide) > 0 {
		env.Hidden = func(abs string) bool {
			for _, h := range fx.hide {
				hp := filepath.Join(root, filepath.FromSlash(h))
				if abs == hp || strings.HasPrefix(abs, hp+string(filepath.Separator)) {
					return true
				}
			}
			return false
		}
	}
	args := json.RawMessage(strings.NewReplacer("$WORK", jsonEscape(root), "$OUTSIDE", jsonEscape(outside)).Replace(string(fx.args)))
	reg, err := tools.NewRegistry(tool)
	if err != nil {
		return nil, err
	}
	if err := reg.Validate(fx.tool, args); err != nil {
		return nil, fmt.Errorf("the arguments do not validate: %w", err)
	}

	o := &outcome{after: map[string]string{}}
	placeholders := strings.NewReplacer(root, "$WORK", outside, "$OUTSIDE")
	res, err := tool.Run(ctx, env, args)
	o.result, o.callErr = placeholders.Replace(res.Content), err
	if err != nil {
		o.errText = placeholders.Replace(err.Error())
		if strings.Contains(err.Error(), root+string(filepath.Separator)) {
			o.problems = append(o.problems, "the error shows an absolute path of the workspace: "+o.errText)
		}
	}
	if err == nil && res.IsError {
		o.problems = append(o.problems, "the call returned an error result: "+o.result)
	}
	if fx.errorIs != "" && !errors.Is(err, errorSentinels[fx.errorIs]) {
		o.problems = append(o.problems, fmt.Sprintf("error %v does not match %s", err, fx.errorIs))
	}

	afterState, err := snapshot(root)
	if err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(maps.Keys(afterState)) {
		now, was := afterState[p], before[p]
		switch {
		case now == was:
		case strings.HasPrefix(now, "file:"):
			o.after[p] = strings.TrimPrefix(now, "file:")
		default:
			o.problems = append(o.problems, fmt.Sprintf("%s is now a %s (was %q)", p, now, clipTo(was, 60)))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if _, ok := afterState[p]; !ok {
			o.gone = append(o.gone, p)
		}
	}
	outAfter, err := snapshot(outside)
	if err != nil {
		return nil, err
	}
	if !maps.Equal(outBefore, outAfter) {
		o.problems = append(o.problems, "the directory outside the workspace was changed")
	}
	for _, m := range fx.modes {
		fi, err := os.Stat(fx.abs(m.path, root, outside))
		if err != nil || fi.Mode().Perm() != m.mode {
			o.problems = append(o.problems, fmt.Sprintf("mode of %s = %v, want %v", m.path, modeOf(fi), m.mode))
		}
	}
	return o, nil
}

// modeOf is fi's permission bits, or 0 without fi.
func modeOf(fi fs.FileInfo) fs.FileMode {
	if fi == nil {
		return 0
	}
	return fi.Mode().Perm()
}

// setUp writes the fixture's files and makes its links, modes and
// modification times.
func (fx *fixture) setUp(root, outside string) error {
	write := func(dir string, e fixtureEntry) error {
		p := filepath.Join(dir, filepath.FromSlash(e.path))
		if e.dir {
			return os.MkdirAll(p, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(e.data), 0o644)
	}
	for _, e := range fx.ws {
		if err := write(root, e); err != nil {
			return err
		}
	}
	for _, e := range fx.outside {
		if err := write(outside, e); err != nil {
			return err
		}
	}
	for _, l := range fx.symlinks {
		target := strings.NewReplacer("$WORK", root, "$OUTSIDE", outside).Replace(l.to)
		if err := os.Symlink(filepath.FromSlash(target), fx.abs(l.from, root, outside)); err != nil {
			return err
		}
	}
	for _, l := range fx.hardlinks {
		if err := os.Link(fx.abs(l.from, root, outside), fx.abs(l.to, root, outside)); err != nil {
			return err
		}
	}
	for _, m := range fx.chmods {
		if err := os.Chmod(fx.abs(m.path, root, outside), m.mode); err != nil {
			return err
		}
	}
	i := 0
	for _, e := range fx.ws {
		if e.dir {
			continue
		}
		mt := fixtureMTimeBase.Add(time.Duration(i) * time.Hour)
		if t, ok := fx.mtimes[e.path]; ok {
			mt = t
		}
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(e.path)), mt, mt); err != nil {
			return err
		}
		i++
	}
	for p := range fx.mtimes {
		if !slices.ContainsFunc(fx.ws, func(e fixtureEntry) bool { return e.path == p && !e.dir }) {
			return fmt.Errorf("mtime: %s is not a ws file", p)
		}
	}
	return nil
}

// abs is the absolute path of a path of a header line: $WORK and
// $OUTSIDE expanded, relative to the workspace root.
func (fx *fixture) abs(p, root, outside string) string {
	p = filepath.FromSlash(strings.NewReplacer("$WORK", root, "$OUTSIDE", outside).Replace(p))
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// jsonEscape is s as it appears inside a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// snapshot maps every file and symlink under dir (slash-separated
// relative path) to "file:<content>" or "symlink:<target>".
func snapshot(dir string) (map[string]string, error) {
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			state[rel] = "symlink:" + target
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			state[rel] = "file:" + string(data)
		}
		return nil
	})
	return state, err
}

// check compares a run with the fixture's want, after and gone sections
// and returns each difference as a readable message.
func (fx *fixture) check(o *outcome) []string {
	var diffs []string
	switch {
	case fx.wantResult == nil && fx.wantError == nil:
		diffs = append(diffs, "the fixture has no want/result or want/error section; write one, "+
			"or run go test -run TestFixtures -update and read the diff")
	case fx.wantError != nil && o.callErr == nil:
		diffs = append(diffs, fmt.Sprintf("the call succeeded; want the error %q. The result:\n%s", *fx.wantError, clip(o.result)))
	case fx.wantError != nil && *fx.wantError != o.errText:
		diffs = append(diffs, textDiff("want/error", *fx.wantError+"\n", o.errText+"\n"))
	case fx.wantResult != nil && o.callErr != nil:
		diffs = append(diffs, "the call failed: "+o.errText)
	case fx.wantResult != nil && *fx.wantResult != o.result:
		diffs = append(diffs, textDiff("want/result", *fx.wantResult, o.result))
	}
	for _, p := range slices.Sorted(maps.Keys(fx.after)) {
		got, ok := o.after[p]
		switch {
		case !ok && slices.Contains(o.gone, p):
			diffs = append(diffs, fmt.Sprintf("after/%s: the file is gone", p))
		case !ok:
			diffs = append(diffs, fmt.Sprintf("after/%s: the call did not change or create the file", p))
		case got != fx.after[p]:
			diffs = append(diffs, textDiff("after/"+p, fx.after[p], got))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(o.after)) {
		if _, ok := fx.after[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s was changed or created, and no after/%s section says so:\n%s", p, p, clip(o.after[p])))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(fx.gone)) {
		if !slices.Contains(o.gone, p) {
			diffs = append(diffs, fmt.Sprintf("gone/%s: the path still exists (or never did)", p))
		}
	}
	for _, p := range o.gone {
		if !fx.gone[p] {
			diffs = append(diffs, fmt.Sprintf("%s was removed, and no gone/%s section says so", p, p))
		}
	}
	return append(diffs, o.problems...)
}

// textDiff shows how a section differs from what the run gave.
func textDiff(name, want, got string) string {
	return fmt.Sprintf("%s differs (-want +got):\n%s", name, clip(patch.Unified("want", "got", want, got, 3)))
}
