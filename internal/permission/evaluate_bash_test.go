package permission

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The differential test of evaluate.go: command lines are generated from a
// grammar of the places where bash evaluates text as arithmetic or as a
// variable name, with strings whose array subscripts run commands. Whenever
// the classifier allows one as read-only, it is run by real bash under
// strace, and the test fails if any program ran that the classifier did not
// name, or if a file appeared.

// evalGen builds command lines from choices: bytes of a fuzz input, then a
// random source.
type evalGen struct {
	data []byte
	rng  *rand.Rand
}

func (g *evalGen) pick(n int) int {
	if len(g.data) > 0 {
		b := g.data[0]
		g.data = g.data[1:]
		return int(b) % n
	}
	if g.rng != nil {
		return g.rng.IntN(n)
	}
	return 0
}

func (g *evalGen) one(options ...string) string { return options[g.pick(len(options))] }

// shellSingle quotes s for bash in single quotes.
func shellSingle(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellDouble quotes s for bash in double quotes, so that it stays literal.
func shellDouble(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

// payload is a command substitution that leaves a trace when it runs.
func (g *evalGen) payload() string {
	return g.one("$(touch F)", "`touch F`", "$(pwn)", "$(: >F)", "$(echo >F)")
}

// carrier is text whose evaluation runs the payload.
func (g *evalGen) carrier() string {
	p := g.payload()
	return g.one("a["+p+"]", "x["+p+"]", "a[1+"+p+"]", "a[ "+p+" ]", "b[a["+p+"]]", p)
}

// quoted quotes text one of the ways bash reads as that text.
func (g *evalGen) quoted(s string) string {
	switch g.pick(3) {
	case 0:
		return shellSingle(s)
	case 1:
		return shellDouble(s)
	}
	return "$" + shellSingle(s)
}

// setter returns code that gives a variable the carrier, and the
// variable's name as arithmetic refers to it.
func (g *evalGen) setter(s string) (code, name string) {
	n := g.one("x", "v", "y1")
	q := g.quoted(s)
	switch g.pick(16) {
	case 0:
		return n + "=" + q, n
	case 1:
		return g.one("declare", "typeset", "export", "readonly") + " " + n + "=" + q, n
	case 2:
		return "read -r " + n + " <<< " + q, n
	case 3:
		return "IFS= read -r " + n + " <<< " + q, n
	case 4:
		return "printf -v " + n + " %s " + q, n
	case 5:
		return "mapfile -t " + n + " <<< " + q, n
	case 6:
		return ": ${" + n + ":=" + q + "}", n
	case 7:
		return "[[ " + q + " =~ (.*) ]]", "BASH_REMATCH[1]"
	case 8:
		return n + "=" + q + "; m=" + n, "m"
	case 9:
		return n + "=" + q + "; declare -n r=" + n, "r"
	case 10:
		return "read -r <<< " + q, "REPLY"
	case 11:
		return n + "=(" + q + ")", n
	case 12:
		return "read -ra " + n + " <<< " + q, n
	case 13:
		return "set -- " + q, "1"
	case 14:
		return n + "+=" + q, n
	}
	return "f() { local " + n + "=" + q + "; }; " + n + "=" + q, n
}

// ref returns ways to refer to variable n in arithmetic.
func (g *evalGen) ref(n string) string {
	if n == "1" {
		return g.one("$1", "${1}", `"$1"`)
	}
	if strings.Contains(n, "[") {
		return g.one(n, "${"+n+"}", `"${`+n+`}"`)
	}
	return g.one(n, "$"+n, "${"+n+"}", `"$`+n+`"`, n+"+0", "("+n+")")
}

// arithUse evaluates r as arithmetic, or reads it as a number where bash
// does not evaluate it.
func (g *evalGen) arithUse(r string) string {
	uses := []string{
		"echo $((%s))", "echo $[%s]", "((%s))", "let %s", `let "y=%s"`, "[[ %s -eq 1 ]]",
		"[[ 1 -eq 1 && %s -lt 1 ]]", "echo ${b[%s]}", "y=abc; echo ${y:%s}", "y=abc; echo ${y:0:%s}",
		"for ((i=%s;i<1;i++)); do :; done", "b[%s]=1", "b=([%s]=1)", "declare -i z=%s", `echo "${@:%s}"`,
		"echo ${#b[%s]}", ": $(( 1 ? %s : 0 ))", "case 1 in $((%s))) ;; esac", "z=$((%s))", "echo $(( %s ))",
		"declare -i z; z=%s", "a=(1); echo ${a[%s]}", "b=(1 2); echo ${b[@]:%s}",
		// Not evaluated by bash: these must stay allowed and harmless.
		"shift %s", "[ %s -eq 1 ]", "test %s -eq 1", "printf %%d %s", "echo %s", "[[ %s == 1 ]]",
		"exit %s", "return %s",
	}
	return fmt.Sprintf(g.one(uses...), r)
}

// nameUse reads w as a variable name.
func (g *evalGen) nameUse(w string) string {
	uses := []string{
		"test -v %s", "[ -v %s ]", "[[ -v %s ]]", "printf -v %s x", "read -r %s <<< x",
		"read -a %s <<< x", "declare -n q=%s; echo $q", "a=(1); unset %s", "a=(1); declare %s=1",
		"wait -p %s", "a=(1); unset -v %s", "exec {%s}>/dev/null", "mapfile %s < /dev/null",
		"getopts a %s", "command test -v %s", "builtin printf -v %s x",
	}
	return fmt.Sprintf(g.one(uses...), w)
}

// wrap puts code into a construct around it.
func (g *evalGen) wrap(code string) string {
	switch g.pick(12) {
	case 0:
		return "{ " + code + "; }"
	case 1:
		return "( " + code + " )"
	case 2:
		return "if true; then " + code + "; fi"
	case 3:
		return "g() { " + code + "; }; g"
	case 4:
		return "eval " + shellSingle(code)
	case 5:
		return "bash -c " + shellSingle(code)
	case 6:
		return code + " | cat"
	case 7:
		return "true && " + code
	case 8:
		return "echo ok; " + code
	case 9:
		return "while true; do " + code + "; break; done"
	}
	return code
}

// command builds one command line.
func (g *evalGen) command() string {
	c := g.carrier()
	switch g.pick(5) {
	case 0: // a string evaluated directly
		if g.pick(2) == 0 {
			return g.wrap(g.arithUse(g.quoted(c)))
		}
		return g.wrap(g.nameUse(g.quoted(c)))
	case 1: // the name of a variable that holds it
		set, n := g.setter(c)
		var use string
		if g.pick(3) == 0 && !strings.Contains(n, "[") && n != "1" {
			use = g.one("echo ${!%s}", "echo ${%s@P}", "echo ${!%s}x")
			use = fmt.Sprintf(use, n)
		} else {
			use = g.arithUse(g.ref(n))
		}
		if g.pick(4) == 0 {
			return set + "; " + g.wrap(use)
		}
		return g.wrap(set + "; " + use)
	case 2: // a subscript that names such a variable
		set, n := g.setter(c)
		w := g.one("a[%s]", "'a[%s]'", `"a[$%s]"`, "a[$%s]")
		return g.wrap(set + "; " + g.nameUse(fmt.Sprintf(w, n)))
	case 3: // a variable read as a name
		set, n := g.setter(c)
		if n == "1" || strings.Contains(n, "[") {
			return g.wrap(set + "; " + g.nameUse(`"$`+n+`"`))
		}
		return g.wrap(set + "; " + g.nameUse(`"$`+n+`"`))
	}
	// Harmless arithmetic the classifier should allow.
	return g.wrap(g.one(
		"echo $((1+2))", "i=0; ((i++)); echo $i", "for ((i=0;i<2;i++)); do echo $i; done",
		"n=3; echo $((n*2))", "a=(1 2); echo ${a[1]} ${#a[@]}", "echo $(( $# + 1 ))",
		"s=abc; echo ${s:1:1}", "[[ 2 -gt 1 ]] && echo yes", "x=5; let y=x+1; echo $y",
	))
}

// bashTracer runs command lines under bash and strace.
type bashTracer struct {
	bash, strace, trap string
}

func newBashTracer(t testing.TB) *bashTracer {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipping: bash is not installed")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("skipping: strace is not installed (the test set-up installs it: apt-get install strace)")
	}
	trap := t.TempDir()
	// A trap program: any run of it leaves a file behind.
	if err := os.WriteFile(filepath.Join(trap, "pwn"), []byte("#!/bin/sh\n: > PWNED\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr := &bashTracer{bash: bash, strace: strace, trap: trap}
	if _, _, err := tr.run(t, "true"); err != nil {
		t.Skipf("skipping: strace cannot trace here: %v", err)
	}
	return tr
}

var execveLine = regexp.MustCompile(`execve\("([^"]*)"`)

// run runs command in a new empty directory and returns the programs it
// executed (attempts included) and the files it left.
func (tr *bashTracer) run(t testing.TB, command string) (progs, files []string, err error) {
	dir, err := os.MkdirTemp("", "evalcase")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	log := filepath.Join(tr.trap, "strace.log")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tr.strace, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none",
		"-o", log, "--", tr.bash, "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + tr.trap + ":/usr/bin:/bin", "HOME=" + dir, "LANG=C"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("timed out: %s", out.String())
	}
	if _, ok := runErr.(*exec.ExitError); runErr != nil && !ok {
		return nil, nil, runErr
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range execveLine.FindAllStringSubmatch(string(trace), -1) {
		progs = append(progs, m[1])
	}
	if len(progs) == 0 {
		return nil, nil, fmt.Errorf("no execve in the trace: %s", trace)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return progs[1:], files, nil // progs[0] is bash itself
}

// checkAllowed runs command when the classifier allows it, and fails if
// anything ran that the classifier did not name.
func (tr *bashTracer) checkAllowed(t testing.TB, command string) (allowed bool) {
	t.Helper()
	req := commandRequest(command)
	d := (&Policy{}).WithMode(ModeDefault).Decide(req)
	if d.Action != Allow {
		return false
	}
	progs, files, err := tr.run(t, command)
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	named := map[string]bool{}
	for _, p := range d.Parts {
		if p.Part.Name != "" {
			named[p.Part.Name] = true
		}
	}
	for _, p := range progs {
		if !named[filepath.Base(p)] {
			t.Errorf("%q is allowed as read-only, but bash ran %s (the classifier named %v)\n%s",
				command, p, keys(named), Explain(d))
		}
	}
	if len(files) > 0 {
		t.Errorf("%q is allowed as read-only, but it left %v\n%s", command, files, Explain(d))
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// evalCases is how many commands TestEvaluationAgainstBash generates.
var evalCases = flag.Int("evalcases", 600, "commands TestEvaluationAgainstBash generates")

// evalSeed seeds TestEvaluationAgainstBash's generator.
var evalSeed = flag.Uint64("evalseed", 19, "seed of TestEvaluationAgainstBash's generator")

// TestEvaluationAgainstBash is the short run of the differential test;
// FuzzEvaluationAgainstBash runs longer (make fuzz-shell).
func TestEvaluationAgainstBash(t *testing.T) {
	t.Parallel()
	tr := newBashTracer(t)
	n := *evalCases
	if testing.Short() {
		n = 150
	}
	g := &evalGen{rng: rand.New(rand.NewPCG(*evalSeed, 2026))}
	allowed := 0
	for range n {
		if tr.checkAllowed(t, g.command()) {
			allowed++
		}
	}
	// The grammar has harmless commands too: a classifier that asked for
	// everything would prove nothing.
	if allowed < n/20 {
		t.Errorf("only %d of %d generated commands were allowed; the harmless ones should be", allowed, n)
	}
	t.Logf("%d of %d generated commands allowed and checked under bash", allowed, n)
}

func FuzzEvaluationAgainstBash(f *testing.F) {
	tr := newBashTracer(f)
	for _, seed := range [][]byte{{0}, {1, 1}, {2, 0, 3}, {3, 5, 1, 2}, {4, 4}, {1, 7, 9, 2, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &evalGen{data: data}
		tr.checkAllowed(t, g.command())
	})
}

// TestIssue19ArithmeticAttacks holds the attacks of the outside run: each
// asks in default mode, is denied in plan mode, and asks even in bypass
// mode; a deny rule on the program it would run denies it.
func TestIssue19ArithmeticAttacks(t *testing.T) {
	t.Parallel()
	attacks := []string{
		`echo $[ x='a[$(touch F)]', x ]`,
		`x='a[$(touch F)]'; [[ $x -eq 1 ]]`,
		`x='a[$(touch F)]'; echo $((x))`,
		`test -v 'a[$(touch F)]'`,
		`[[ -v 'a[$(touch F)]' ]]`,
		`printf -v 'a[$(touch F)]' x`,
		`read -r 'a[$(touch F)]' <<< x`,
		`declare -n r='a[$(touch F)]'; echo $r`,
		`let 'x=a[$(touch F)]'`,
		`x='a[$(touch F)]'; echo ${a[x]}`,
		`x='a[$(touch F)]'; y=abc; echo ${y:x}`,
		`x='a[$(touch F)]'; for ((i=x;i<1;i++)); do :; done`,
		`x='a[$(touch F)]'; echo ${!x}`,
		`x='$(touch F)'; echo ${x@P}`,
		`a=(1); unset 'a[$(touch F)]'`,
		`x='a[$(touch F)]' bash -c 'echo $((x))'`,
		`read x < payload.txt; echo $((x))`,
		`echo $(( $(cat payload.txt) ))`,
	}
	for _, cmd := range attacks {
		for i, want := range askAlways {
			p := (&Policy{}).WithMode(modeOrder[i])
			if d := p.Decide(commandRequest(cmd)); d.Action != want {
				t.Errorf("%s mode: %q is %s, want %s\n%s", modeOrder[i], cmd, d.Action, want, Explain(d))
			}
		}
	}
	// Deny rules match the commands a string would run once evaluated.
	deny := MustParseRule("run_command(touch:*)")
	for _, cmd := range attacks[:14] {
		for _, mode := range modeOrder {
			p := &Policy{mode: mode, rules: []EffectiveRule{{List: Deny, Rule: deny}}}
			if d := p.Decide(commandRequest(cmd)); d.Action != Deny {
				t.Errorf("%s mode with deny %s: %q is %s\n%s", mode, deny.Text, cmd, d.Action, Explain(d))
			}
		}
	}
}

// TestHarmlessArithmeticAllowed keeps the common read-only uses of
// arithmetic and variables allowed.
func TestHarmlessArithmeticAllowed(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		`echo $((1+2))`, `i=0; ((i++)); echo $i`, `for ((i=0;i<3;i++)); do echo $i; done`,
		`n=3; echo $((n*2))`, `a=(1 2); echo ${a[1]} ${#a[@]}`, `echo $(( $# + 1 ))`,
		`s=abc; echo ${s:1:1}`, `[[ 2 -gt 1 ]] && echo yes`, `x=5; let y=x+1; echo $y`,
		`count=0; for f in *.go; do count=$((count+1)); done; echo $count`,
		`test -v HOME && echo set`, `read -r line < go.mod; echo "$line"`,
		`x=$(pwd); echo ${#x}`, `[ "$(ls | wc -l)" -gt 0 ] && echo some`,
	} {
		if d := (&Policy{}).WithMode(ModeDefault).Decide(commandRequest(cmd)); d.Action != Allow {
			t.Errorf("%q is %s, want allow\n%s", cmd, d.Action, Explain(d))
		}
	}
}
