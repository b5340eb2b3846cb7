package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/store"
)

func TestStoreSessionSetModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(home, "mx-claw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(ctx, &protocol.Session{ID: "s1", Workspace: home, Model: "a/m1", Status: protocol.StatusIdle}); err != nil {
		t.Fatal(err)
	}
	sess, closeStore, err := openSession(ctx, home, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	if err := sess.SetModel(ctx, "a/m2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetSession(ctx, "s1"); got.Model != "a/m2" || sess.Model() != "a/m2" {
		t.Errorf("stored model %q, session says %q", got.Model, sess.Model())
	}
	// A turn running elsewhere holds the lease: the model is left alone.
	if _, err := st.AcquireLease(ctx, "s1", store.NewOwner(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := sess.SetModel(ctx, "a/m3"); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("SetModel on a busy session: %v", err)
	}
	if got, _ := st.GetSession(ctx, "s1"); got.Model != "a/m2" {
		t.Errorf("busy session's model changed to %q", got.Model)
	}
	if _, _, err := openSession(ctx, home, "nope"); exitCode(err) != ExitUsage {
		t.Errorf("unknown session: %v", err)
	}
}

func TestModelErrorExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{&modelcmd.UsageError{Err: errors.New("unknown model")}, ExitUsage},
		{fmt.Errorf("read: %w", secret.ErrDamaged), ExitUsage},
		{modelcmd.ErrCancelled, ExitCancelled},
		{context.Canceled, ExitCancelled},
		{&modelcmd.DiscoveryError{Status: 401, Body: "no"}, ExitFailed},
	}
	for _, tt := range tests {
		if got := exitCode(modelError(tt.err)); got != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.err, got, tt.want)
		}
	}
	if modelError(nil) != nil {
		t.Error("nil error mapped")
	}
}

// TestMainModelConfigure drives the cobra commands in process.
func TestMainModelConfigure(t *testing.T) {
	home := t.TempDir()
	t.Setenv("MX_CLAW_HOME", home)
	t.Setenv("MX_CLAW_SECRET_BACKEND", "file")
	t.Setenv("MX_CLAW_API_KEY_GW", "")
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return code, out.String(), errb.String()
	}
	const key = "sk-cli-test-0123456789"
	code, out, errs := run(key+"\n", "model", "configure", "gw", "--base-url", "http://127.0.0.1:1/v1", "--models", "a,b", "--default", "b", "--api-key-stdin")
	if code != 0 || !strings.Contains(out, "Default model: gw/b") {
		t.Fatalf("configure: %d %s %s", code, out, errs)
	}
	code, out, _ = run("", "model", "status")
	if code != 0 || !strings.Contains(out, "[configured] (file)") || strings.Contains(out, key) {
		t.Errorf("status: %d\n%s", code, out)
	}
	code, out, _ = run("", "doctor")
	if code != 0 || !strings.Contains(out, "Active model:   gw/b (ready)") || strings.Contains(out, key) {
		t.Errorf("doctor: %d\n%s", code, out)
	}
	if code, _, errs = run("", "model", "configure", "gw", "--models", "c"); code != ExitUsage || !strings.Contains(errs, "--overwrite") {
		t.Errorf("configure over a configured provider: %d %s", code, errs)
	}
	if code, _, errs = run("", "model"); code != ExitUsage || !strings.Contains(errs, "--api-key-stdin") {
		t.Errorf("wizard without a terminal: %d %s", code, errs)
	}
}
