package permission

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDeviceReadsAsk: a read-only program reading a device file, a named
// pipe or a socket is not read-only: `cat /dev/zero` streams for ever and
// `cat fifo` blocks. Reads of /dev/null and the standard streams, and
// programs that only look at a path, stay allowed.
func TestDeviceReadsAsk(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	tests := []struct {
		cmd  string
		want expect
		why  string
	}{
		{"cat /dev/zero", askEdit, "/dev/zero, a character device"},
		{"head -c 16 /dev/urandom | od -x", askEdit, "/dev/urandom"},
		{"wc -c < /dev/zero", askEdit, "/dev/zero"},
		{"cat pipe", askEdit, "pipe, a named pipe"},
		{"grep x ./pipe", askEdit, "a named pipe"},
		{"sort --files0-from=/dev/zero", askEdit, "/dev/zero"},
		{"cat < pipe", askEdit, "a named pipe"},
		{"cat /dev/no-such-device", askEdit, "a device file"},
		{"cat /dev/null", allowAll, ""},
		{"cat - < /dev/null", allowAll, ""},
		{"ls -l pipe", allowAll, ""},
		{"stat pipe", allowAll, ""},
		{"test -p pipe && echo fifo", allowAll, ""},
		{"echo /dev/zero", allowAll, ""},
		{"cat missing.txt", allowAll, ""},
	}
	for _, tt := range tests {
		for i, mode := range modeOrder {
			t.Run(mode.String()+"/"+tt.cmd, func(t *testing.T) {
				t.Parallel()
				req := commandRequest(tt.cmd)
				req.Workspace = ws
				d := (&Policy{}).WithMode(mode).Decide(req)
				if d.Action != tt.want[i] {
					t.Errorf("Decide(%q) in %s = %s (%s), want %s\n%s", tt.cmd, mode, d.Action, d.Source, tt.want[i], Explain(d))
				}
				if tt.why != "" && mode == ModeDefault && !strings.Contains(Explain(d), tt.why) {
					t.Errorf("Decide(%q) does not say why: %s", tt.cmd, Explain(d))
				}
			})
		}
	}
}
