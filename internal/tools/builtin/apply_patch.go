package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/patch"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed apply_patch.md
var applyPatchDescription string

const applyPatchSchema = `{
  "type": "object",
  "properties": {
    "patch": {
      "type": "string",
      "description": "The whole patch, from \"*** Begin Patch\" to \"*** End Patch\"."
    }
  },
  "required": ["patch"],
  "additionalProperties": false
}`

// maxPatchDiffBytes caps the diffs apply_patch returns, all files
// together.
const maxPatchDiffBytes = 32 << 10

// applyPatch is the apply_patch tool.
type applyPatch struct{}

func newApplyPatch() *applyPatch { return &applyPatch{} }

type applyPatchArgs struct {
	Patch string `json:"patch"`
}

// applyPatchInfo is what apply_patch is to the agent; Info returns it, shared.
var applyPatchInfo = tools.Info{Name: "apply_patch", Description: applyPatchDescription, Schema: json.RawMessage(applyPatchSchema),
	Risk: tools.RiskWrite, ConcurrencySafe: false}

func (*applyPatch) Info() tools.Info { return applyPatchInfo }
func (*applyPatch) Summary(args json.RawMessage) string {
	var a applyPatchArgs
	if decodeArgs(args, &a) != nil {
		return "Apply patch"
	}
	p, err := patch.Parse(a.Patch)
	if err != nil {
		return "Apply patch"
	}
	var names []string
	seen := make(map[string]bool)
	for _, op := range p.Ops {
		name := displayPath(op.Path)
		if op.MoveTo != "" {
			name += " -> " + displayPath(op.MoveTo)
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	shown := names[:min(len(names), 3)]
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += ", …"
	}
	return fmt.Sprintf("Patch %s (%s)", pluralCount(len(names), "file"), list)
}

func (*applyPatch) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a applyPatchArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := patch.Parse(a.Patch)
	if err != nil {
		return tools.Result{}, fmt.Errorf("parse patch: %w\n(no file was changed)", err)
	}
	pl := &patchPlan{env: env, ws: ws, files: make(map[string]*patchFile)}
	for _, op := range p.Ops {
		if err := pl.add(op); err != nil {
			return tools.Result{}, fmt.Errorf("%w\n(the patch was not applied; no file was changed)", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	if err := pl.commit(); err != nil {
		return tools.Result{}, err
	}

	var sb strings.Builder
	if changes := len(pl.summary) - pl.unchanged; changes == 0 {
		sb.WriteString("The patch changed nothing:\n")
	} else {
		fmt.Fprintf(&sb, "Applied the patch (%s):\n", pluralCount(changes, "change"))
	}
	for _, s := range pl.summary {
		sb.WriteString(s + "\n")
	}
	if diffs := pl.diffs.String(); diffs != "" {
		sb.WriteString("\n" + tools.Truncate(diffs, maxPatchDiffBytes))
	}
	return tools.Result{Content: sb.String()}, nil
}

// patchFile is one file a patch touches: as it is on disk and as the
// patch leaves it.
type patchFile struct {
	abs, rel   string
	fi         fs.FileInfo // on disk, if it exists
	origExists bool
	orig       []byte
	exists     bool
	data       []byte
	mode       fs.FileMode // for a new file
	guarded    bool        // passed the read-before-write guard
}

// patchPlan applies a patch's operations in memory, in order, so that
// nothing is written unless every operation succeeds.
type patchPlan struct {
	env       *tools.Env
	ws        *tools.Workspace
	files     map[string]*patchFile // by canonical absolute path
	order     []*patchFile          // in the order first touched
	summary   []string              // "A path", "M path", "D path", "R old -> new", "= path (unchanged…)"
	unchanged int                   // the "=" entries of summary
	diffs     strings.Builder
}

// load returns the file at p as the patch has left it so far, reading it
// from disk the first time.
func (pl *patchPlan) load(p string) (*patchFile, error) {
	abs, rel, err := pl.ws.ResolveForWrite(p)
	if err != nil {
		return nil, err
	}
	if f, ok := pl.files[abs]; ok {
		return f, nil
	}
	f := &patchFile{abs: abs, rel: rel, mode: newFileMode}
	fi, err := pl.ws.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file", rel)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s)", rel, fi.Mode().Type())
	default:
		data, err := pl.ws.ReadFile(abs)
		if err != nil {
			return nil, err
		}
		f.fi, f.origExists, f.exists = fi, true, true
		f.orig, f.data = data, data
		f.mode = fi.Mode().Perm()
	}
	pl.files[abs] = f
	pl.order = append(pl.order, f)
	return f, nil
}

// guard checks, once per file, that an existing file may be changed: the
// session has read it and it has not changed since, and it has no other
// hard links.
func (pl *patchPlan) guard(f *patchFile) error {
	if !f.origExists || f.guarded {
		return nil
	}
	if n := hardLinks(f.fi); n > 1 {
		return fmt.Errorf("%s has %d hard links; editing it would change files outside the workspace", f.rel, n)
	}
	if pl.env.Files != nil {
		if err := pl.env.Files.Check(f.abs, f.fi, f.orig); err != nil {
			return err
		}
	}
	f.guarded = true
	return nil
}

// add applies one operation in memory.
func (pl *patchPlan) add(op patch.FileOp) error {
	switch op.Kind {
	case patch.Add:
		f, err := pl.load(op.Path)
		if err != nil {
			return fmt.Errorf("add %s: %w", displayPath(op.Path), err)
		}
		if f.exists {
			return fmt.Errorf("add %s: the file already exists; use *** Update File to change it", f.rel)
		}
		content := op.Content()
		f.exists, f.data = true, []byte(content)
		pl.summary = append(pl.summary, "A "+f.rel)
		pl.diffs.WriteString(patch.Unified("/dev/null", diffLabel("b", f.rel), "", content, diffContext))
	case patch.Delete:
		if err := pl.refuseSymlink(op.Path, "delete"); err != nil {
			return err
		}
		f, err := pl.load(op.Path)
		if err != nil {
			return fmt.Errorf("delete %s: %w", displayPath(op.Path), err)
		}
		if !f.exists {
			return fmt.Errorf("delete %s: the file does not exist", f.rel)
		}
		if err := pl.guard(f); err != nil {
			return err
		}
		f.exists, f.data = false, nil
		pl.summary = append(pl.summary, "D "+f.rel)
	case patch.Update:
		return pl.update(op)
	default:
		return fmt.Errorf("unknown file operation %v", op.Kind)
	}
	return nil
}

// update applies an "*** Update File" operation, and its move, in memory.
func (pl *patchPlan) update(op patch.FileOp) error {
	f, err := pl.load(op.Path)
	if err != nil {
		return fmt.Errorf("update %s: %w", displayPath(op.Path), err)
	}
	if !f.exists {
		if f.origExists {
			return fmt.Errorf("update %s: the patch deleted the file earlier", f.rel)
		}
		return fmt.Errorf("update %s: %w", f.rel, notFound(pl.ws, f.abs, f.rel))
	}
	if err := pl.guard(f); err != nil {
		return err
	}
	if isBinary(f.data) {
		return fmt.Errorf("update %s: it is a binary file; only text files can be patched", f.rel)
	}
	old := string(f.data)
	updated, err := patch.ApplyToContent(old, op.Hunks)
	if err != nil {
		return fmt.Errorf("update %s: %w", f.rel, err)
	}
	if op.MoveTo == "" {
		pl.modified(f, old, updated)
		return nil
	}

	if err := pl.refuseSymlink(op.Path, "move"); err != nil {
		return err
	}
	dst, err := pl.load(op.MoveTo)
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", f.rel, displayPath(op.MoveTo), err)
	}
	if dst == f {
		pl.modified(f, old, updated)
		return nil
	}
	if dst.exists {
		return fmt.Errorf("move %s to %s: %s already exists; delete it earlier in the patch if it should be replaced",
			f.rel, dst.rel, dst.rel)
	}
	dst.exists, dst.data = true, []byte(updated)
	if !dst.origExists {
		dst.mode = f.mode
	}
	f.exists, f.data = false, nil
	pl.summary = append(pl.summary, "R "+f.rel+" -> "+dst.rel)
	pl.diffs.WriteString(patch.Unified(diffLabel("a", f.rel), diffLabel("b", dst.rel), old, updated, diffContext))
	return nil
}

// unchangedNote follows a file whose hunks matched but changed nothing.
// Such a hunk is accepted rather than refused (codex refuses a hunk line
// without a prefix; here it is context that lost its leading space, a
// known slip that must still match the file): the file is left alone, and
// the model is told, so it does not take "M" for a change it meant.
const unchangedNote = " (unchanged: its hunks leave it as it was; start lines to remove with - and lines to add with +)"

// modified records the update of f from old to updated in the summary and
// the diffs: "M path" with its diff, or "= path" when nothing changed.
func (pl *patchPlan) modified(f *patchFile, old, updated string) {
	if updated == old {
		pl.summary = append(pl.summary, "= "+f.rel+unchangedNote)
		pl.unchanged++
		return
	}
	f.data = []byte(updated)
	pl.summary = append(pl.summary, "M "+f.rel)
	pl.diffs.WriteString(patch.Unified(diffLabel("a", f.rel), diffLabel("b", f.rel), old, updated, diffContext))
}

// refuseSymlink refuses to delete or move the symlink p itself: resolving
// it would act on its target instead.
func (pl *patchPlan) refuseSymlink(p, what string) error {
	target, err := pl.ws.Readlink(p)
	if err != nil {
		return nil // not a symlink, or a problem load reports
	}
	return fmt.Errorf("%s %s: it is a symlink (to %s); apply_patch does not %s symlinks", what, displayPath(p), target, what)
}

// commit writes the files the patch changed or created, then deletes the
// files it deleted or moved away. Writes are atomic per file; if one
// fails, the error says which files were already changed.
func (pl *patchPlan) commit() error {
	var done []string
	fail := func(err error) error {
		if len(done) == 0 {
			return fmt.Errorf("%w\n(no file was changed)", err)
		}
		return fmt.Errorf("%w\n(these files were already changed: %s; the others were not)", err, strings.Join(done, ", "))
	}
	for _, f := range pl.order {
		if !f.exists || (f.origExists && bytes.Equal(f.orig, f.data)) {
			continue
		}
		if _, err := pl.ws.WriteFileAtomic(f.abs, f.data, f.mode); err != nil {
			return fail(err)
		}
		recordWrite(pl.env, pl.ws, f.abs, f.data, false)
		done = append(done, f.rel)
	}
	for _, f := range pl.order {
		if !f.origExists || f.exists {
			continue
		}
		if err := removeFile(pl.ws, f.abs, f.rel); err != nil {
			return fail(err)
		}
		done = append(done, f.rel)
	}
	return nil
}

// removeFile deletes the regular file at the canonical path abs through an
// os.Root on the workspace directory holding it, so the removal cannot
// leave the workspace even if a directory is swapped for a symlink.
func removeFile(ws *tools.Workspace, abs, rel string) error {
	for _, base := range append([]string{ws.Root()}, ws.Allowed()...) {
		sub, err := filepath.Rel(base, abs)
		if err != nil || sub == "." || sub == ".." || strings.HasPrefix(sub, ".."+string(filepath.Separator)) {
			continue
		}
		r, err := os.OpenRoot(base)
		if err != nil {
			return fmt.Errorf("delete %s: %w", rel, err)
		}
		defer r.Close()
		if err := r.Remove(sub); err != nil {
			return fmt.Errorf("delete %s: %w", rel, unwrapPath(err))
		}
		return nil
	}
	return fmt.Errorf("delete %s: %w", rel, tools.ErrOutsideWorkspace)
}
