package patch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addFixtureSeeds adds the golden fixtures' patches (and inputs) as seeds.
func addFixtureSeeds(f *testing.F, add func(patch, in string)) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "apply", "*"))
	for _, dir := range dirs {
		p, err1 := os.ReadFile(filepath.Join(dir, "patch.txt"))
		in, err2 := os.ReadFile(filepath.Join(dir, "in.txt"))
		if err1 == nil && err2 == nil {
			add(string(p), string(in))
		}
	}
}

func FuzzParse(f *testing.F) {
	addFixtureSeeds(f, func(p, _ string) { f.Add(p) })
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n\n+y\n*** Delete File: b\n*** End Patch")
	f.Add("<<EOF\n*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\nEOF")
	f.Add("*** Begin Patch\n*** Update File: a\n@@ x\n@@ y\n z\n*** End of File\n*** End Patch")
	f.Add("*** Begin Patch\n***\n@@\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			if pe, ok := err.(*ParseError); !ok || pe.Line < 1 {
				t.Fatalf("error %v (%T) has no line", err, err)
			}
			return
		}
		if len(p.Ops) == 0 {
			t.Fatal("parsed a patch without operations")
		}
		for _, op := range p.Ops {
			if op.Path == "" || strings.TrimSpace(op.Path) != op.Path {
				t.Fatalf("bad path %q", op.Path)
			}
			if op.Kind == Update && len(op.Hunks) == 0 && op.MoveTo == "" {
				t.Fatal("update without hunks or move")
			}
			for _, h := range op.Hunks {
				if len(h.Lines) == 0 {
					t.Fatal("empty hunk")
				}
			}
		}
	})
}

func FuzzApply(f *testing.F) {
	addFixtureSeeds(f, func(p, in string) { f.Add(p, in) })
	f.Add("*** Begin Patch\n*** Update File: a\n@@\n-\n+x\n*** End Patch", "\n\n")
	f.Add("*** Begin Patch\n*** Update File: a\n@@ a\n+b\n*** End of File\n*** End Patch", "a\r\nb")
	f.Fuzz(func(t *testing.T, text, in string) {
		p, err := Parse(text)
		if err != nil {
			return
		}
		for _, op := range p.Ops {
			if op.Kind != Update {
				continue
			}
			out, err := ApplyToContent(in, op.Hunks)
			if err != nil {
				if _, ok := err.(*ApplyError); !ok {
					t.Fatalf("error %v is a %T", err, err)
				}
				continue
			}
			checkDiff(t, in, out, Unified("a/x", "b/x", in, out, 3))
		}
	})
}

func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n", 3)
	f.Add("", "x", 0)
	f.Add("a\r\nb", "b\r\na\r\n", 1)
	f.Fuzz(func(t *testing.T, old, new string, context int) {
		context = context % 8
		checkDiff(t, old, new, Unified("a/x", "b/x", old, new, context))
	})
}
