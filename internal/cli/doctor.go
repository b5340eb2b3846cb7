package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

func newDoctorCmd(stdio IO) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Show mx-claw's home, config, active model, providers and secret store",
		Long: `Show where mx-claw keeps its state and whether it can work: the home
directory, the config file, the database, the active model and whether its
provider is ready, every provider's readiness and key state (only ever
"[configured]"), and the secret store keys are written to.

Exits 1 when the config or the secret store cannot be read.

With --repair it checks and mends the store instead (see repair.go).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if repair {
				return doctorRepair(cmd.Context(), stdio.Out)
			}
			return doctor(cmd.Context(), stdio.Out)
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "check the database, set aside and save unreadable records, fail turns left running, remove stale temporary files")
	return cmd
}

func doctor(ctx context.Context, w io.Writer) error {
	var problems []string
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-15s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(w, "mx-claw %s\n", Version)
	home, err := config.Home()
	if err != nil {
		line("Home", "error: %v", err)
		return usageErr(err)
	}
	line("Home", "%s%s", home, fileState(home, 0o700))
	cfgPath := filepath.Join(home, config.FileName)
	cfg, err := config.Load(home)
	if err != nil {
		line("Config", "%s: %v", cfgPath, err)
		problems = append(problems, "the config cannot be read")
	} else {
		line("Config", "%s%s", cfgPath, fileState(cfgPath, 0o600))
	}
	if p := doctorStore(ctx, w, home, cfg); p != "" {
		problems = append(problems, p)
	}
	doctorSandbox(w)

	secrets, err := app.NewSecrets(home)
	if err != nil {
		line("Secret store", "error: %v", err)
		problems = append(problems, "the secret store setting is wrong")
	} else {
		line("Secret store", "%s", secrets.Describe())
		for _, name := range []string{secret.FileName, secret.KeyFileName} {
			p := filepath.Join(home, name)
			if st := fileState(p, 0o600); strings.Contains(st, "expected") {
				line("", "%s%s", p, st)
			}
		}
		read := "environment variables, then " + secrets.Backend()
		if len(secrets.ReadOnlySources()) > 1 {
			read = secret.CommandVar + ", then " + read
		}
		if secrets.Backend() != secret.NameFile && secrets.Backend() != "none" {
			read += ", then file"
		}
		line("Keys read from", "%s", read)
	}

	if cfg != nil {
		keyOf := func(name string) (string, string, error) {
			if secrets == nil {
				return "", "", nil
			}
			k, src, err := secrets.Get(ctx, name)
			if errors.Is(err, secret.ErrNotFound) {
				return "", "", nil
			}
			return k, src, err
		}
		if ref, err := cfg.Resolve(""); err != nil {
			line("Active model", "none: %v", err)
		} else {
			k, _, kerr := keyOf(ref.Provider.Name)
			switch {
			case kerr != nil:
				line("Active model", "%s (key unreadable)", ref)
			case config.Ready(ref.Provider, k) != nil:
				line("Active model", "%s (not ready: %v)", ref, config.Ready(ref.Provider, k))
			default:
				line("Active model", "%s (ready)", ref)
			}
		}
		fmt.Fprintln(w, "Providers:")
		for _, name := range cfg.ProviderNames() {
			p := cfg.Providers[name]
			k, src, kerr := keyOf(name)
			var key, state string
			switch {
			case kerr != nil:
				key, state = "unreadable", kerr.Error()
				problems = append(problems, "a key cannot be read")
			case k != "":
				key = "[configured] (" + src + ")"
			case p.RequiresAPIKey:
				key = "not set"
			default:
				key = "not needed"
			}
			if state == "" {
				state = "ready"
				if err := config.Ready(p, k); err != nil {
					state = "needs configuration: " + err.Error()
				}
			}
			fmt.Fprintf(w, "  %-10s key %-28s %s\n", name, key, state)
		}
	}
	if len(problems) > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("doctor: %s", strings.Join(problems, "; "))}
	}
	return nil
}

// fileState says whether path exists and whether its permissions are
// looser than want.
func fileState(path string, want fs.FileMode) string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return " (not created yet)"
	case err != nil:
		return fmt.Sprintf(" (%v)", err)
	case fi.Mode().Perm()&^want != 0:
		return fmt.Sprintf(" (mode %04o, expected %04o)", fi.Mode().Perm(), want)
	}
	return ""
}
