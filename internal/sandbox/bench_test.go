package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// BenchmarkOverhead measures what a sandbox adds to a command: `true`, and
// `go build` of a small package (warm build cache), each run without a
// sandbox (bash directly, as before) and under each backend this machine
// runs, interleaved in one run. It reports each one's time per command and
// its ratio to no sandbox (x-bwrap, x-landlock).
func BenchmarkOverhead(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	ws, cache := filepath.Join(root, "ws"), filepath.Join(root, "gocache")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(cache, 0o755)
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module bench\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n"), 0o644)
	runners := map[string]*execx.Runner{"none": nil}
	order := []string{"none"}
	for _, name := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		m := sandbox.NewManager(sandbox.Options{Backend: name})
		b.Cleanup(func() { m.Close() })
		if !m.Status().Enforced {
			b.Logf("%s skipped: %s", name, m.Status().Reason)
			continue
		}
		cfg := sandbox.Resolve(nil, nil, "", "")
		cfg.WritableRoots = []string{cache}
		s, err := m.Session(sandbox.Policy{Config: cfg, Workspace: ws, TmpDir: filepath.Join(root, "tmp-"+name)})
		if err != nil {
			b.Fatal(err)
		}
		runners[name] = &execx.Runner{Sandbox: s}
		order = append(order, name)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GOCACHE=" + cache, "GOFLAGS=-buildvcs=false",
		"GOTOOLCHAIN=local", "GOPATH=" + filepath.Join(root, "gopath"), "TMPDIR=" + filepath.Join(root, "tmp-none")}
	os.MkdirAll(filepath.Join(root, "tmp-none"), 0o755)
	cases := []struct{ name, script string }{{"true", "true"}}
	if _, err := exec.LookPath("go"); err == nil {
		cases = append(cases, struct{ name, script string }{"go-build", "go build -o \"$TMPDIR/app\" ."})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			run := func(r *execx.Runner) time.Duration {
				start := time.Now()
				res, err := r.Run(context.Background(), execx.Command{Script: c.script, Dir: ws, Env: env, Timeout: time.Minute})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%s: %v %s", c.script, err, res.Output)
				}
				return time.Since(start)
			}
			for _, name := range order {
				run(runners[name]) // warm caches
			}
			total := map[string]time.Duration{}
			for b.Loop() {
				for _, name := range order {
					total[name] += run(runners[name])
				}
			}
			n := float64(b.N)
			for _, name := range order {
				b.ReportMetric(float64(total[name].Microseconds())/1000/n, "ms-"+name)
				if name != "none" {
					b.ReportMetric(float64(total[name])/float64(total["none"]), "x-"+name)
				}
			}
		})
	}
}
