package permission

import (
	"strings"
	"testing"
)

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"", "ls", "echo '", "cat <<EOF", "cat <<'rm -rf /'", "x=", "\\", "# ",
		"f() {", "case x in", "$(", "`", "bash -c", "eval", "{a,b}", "$'\\x",
		"sed -n 's/a/b/w", "find . -exec", "xargs", "sudo -u", "env -S", "a | b &&",
		"rm -rf / \"", ":(){ :|:& };", strings.Repeat("(", 50),
		`let "y="\$(echo >F)""`, `echo $(( "\\" ))`,
	} {
		f.Add(s)
	}
	env := Env{Workspace: testWS, Home: testHome}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		classify(s, env) // must not panic
		p := (&Policy{}).WithMode(ModeBypass)
		for _, sep := range []string{"\n", " ; ", " && "} {
			cmd := s + sep + "rm -rf /"
			if d := p.Decide(commandRequest(cmd)); d.Action == Allow {
				t.Errorf("%q is allowed in bypass mode:\n%s", cmd, Explain(d))
			}
		}
	})
}
