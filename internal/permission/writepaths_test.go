package permission

import (
	"testing"
)

func TestEditDenyRulesCoverShellWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		rule string
		want Action // in every mode
	}{
		{"echo x > src/a", "edit_file(src/**)", Deny},
		{"echo x >> src/a", "edit_file(src/**)", Deny},
		{"echo x &> src/a", "write_file(src/**)", Deny},
		{"echo x > ./src/../src/a", "edit_file(src/**)", Deny},
		{"cd src && echo x > a", "edit_file(src/**)", Deny},
		{"tee src/a", "edit_file(src/**)", Deny},
		{"echo x | tee -a src/a", "write_file(src/**)", Deny},
		{"cp x src/a", "edit_file(src/**)", Deny},
		{"cp x src", "edit_file(src/*)", Deny},
		{"cp -t src x", "edit_file(src/**)", Deny},
		{"cp -r --target-directory=src x", "edit_file(src/**)", Deny},
		{"mv src/a b", "edit_file(src/**)", Deny},
		{"install -m 644 x src/a", "edit_file(src/**)", Deny},
		{"sed -i s/a/b/ src/a", "edit_file(src/**)", Deny},
		{"sed -i -e s/a/b/ src/a", "edit_file(src/a)", Deny},
		{"perl -pi -e s/a/b/ src/a", "edit_file(src/**)", Deny},
		{"dd if=x of=src/a", "edit_file(src/**)", Deny},
		{"touch src/a", "edit_file(src/**)", Deny},
		{"rm -f src/a", "edit_file(src/**)", Deny},
		{"chmod 600 src/a", "edit_file(src/**)", Deny},
		{"truncate -s 0 src/a", "edit_file(src/**)", Deny},
		{"ls && echo x > /w/proj/src/a", "edit_file(src/**)", Deny},
		{"bash -c 'echo x > src/a'", "edit_file(src/**)", Deny},
		// Read deny rules hold for input redirections.
		{"cat < secrets/k", "read_file(secrets/**)", Deny},
		{"while read l; do echo $l; done < secrets/k", "read_file(secrets/**)", Deny},
	}
	for _, tt := range tests {
		for _, mode := range modeOrder {
			t.Run(string(mode)+"/"+tt.cmd, func(t *testing.T) {
				t.Parallel()
				p := policy(t, mode, nil, nil, []string{tt.rule})
				d := p.Decide(commandRequest(tt.cmd))
				if d.Action != tt.want {
					t.Errorf("%s with deny %s in %s: %s (%s) %q; want %s", tt.cmd, tt.rule, mode, d.Action, d.Source, d.Reason, tt.want)
				}
			})
		}
	}
}

func TestEditDenyRulesSpareOtherWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want expect // default, acceptEdits, plan, bypass
	}{
		{"echo x > other/a", editInWS},
		{"cp src/a other/a", askEdit},
		{"sed s/a/b/ src/a", allowAll},
		{"cat src/a > other/a", editInWS},
		// The target is not known: the rule cannot be checked.
		{"echo x | tee $f", askAlways},
		{"cp x $d", askAlways},
	}
	for _, tt := range tests {
		for i, mode := range modeOrder {
			t.Run(string(mode)+"/"+tt.cmd, func(t *testing.T) {
				t.Parallel()
				p := policy(t, mode, nil, nil, []string{"edit_file(src/**)"})
				if d := p.Decide(commandRequest(tt.cmd)); d.Action != tt.want[i] {
					t.Errorf("%s in %s: %s (%s) %q; want %s", tt.cmd, mode, d.Action, d.Source, d.Reason, tt.want[i])
				}
			})
		}
	}
}
