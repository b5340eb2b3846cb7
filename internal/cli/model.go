package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/store"
)

// configureFlagsHint is the non-interactive form of configure, named in
// every error that needs it.
const configureFlagsHint = "mx-claw model configure NAME --base-url URL --models a,b --default a [--api-key-stdin | --no-api-key]"

// maxKeyBytes caps a key read from standard input.
const maxKeyBytes = 64 << 10

func newModelCmd(stdio IO) *cobra.Command {
	var sessionID string
	cmd := &cobra.Command{
		Use:   "model [MODEL]",
		Short: "Configure model providers, API keys and the default model",
		Long: `Configure model providers and choose models (the same commands as /model
in the interactive UI).

Without arguments, a wizard asks for a provider, its base URL, its model
names, its API key (hidden) and the default model, and saves once at the
end. With a MODEL and --session, that session uses MODEL from now on.

API keys never go into config.json: they are read from MX_CLAW_SECRET_COMMAND,
then the provider's environment variable, then the OS keyring, then an
encrypted file in the mx-claw home; they are shown only as [configured].`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withModel(cmd.Context(), stdio, sessionID, func(ctx context.Context, h *modelcmd.Handler) error {
				if len(args) == 1 {
					if h.Session == nil {
						return usagef("unknown command %q for mx-claw model (to use a model in a session: mx-claw model MODEL --session ID; `mx-claw model --help` lists the commands)", args[0])
					}
					return h.UseModel(ctx, args[0])
				}
				if h.Prompt == nil {
					return usagef("the model wizard asks questions and standard input is not a terminal; configure with flags: %s", configureFlagsHint)
				}
				return h.Wizard(ctx)
			})
		},
	}
	cmd.PersistentFlags().StringVar(&sessionID, "session", "", "the session whose model switch, use and MODEL change")

	simple := func(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, h *modelcmd.Handler, args []string) error) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error {
				return withModel(cmd.Context(), stdio, sessionID, func(ctx context.Context, h *modelcmd.Handler) error {
					return run(ctx, h, a)
				})
			},
		}
	}
	cmd.AddCommand(
		newModelConfigureCmd(stdio, &sessionID),
		simple("switch", "Choose another model of the same provider for a session (--session)", cobra.NoArgs,
			func(ctx context.Context, h *modelcmd.Handler, args []string) error {
				if h.Prompt == nil {
					return usagef("switch asks which model to use and standard input is not a terminal; use `mx-claw model use PROVIDER MODEL --session ID`")
				}
				return h.Switch(ctx)
			}),
		simple("use PROVIDER MODEL", "Use PROVIDER/MODEL in a session (--session); the default stays", cobra.ExactArgs(2),
			func(ctx context.Context, h *modelcmd.Handler, args []string) error {
				return h.Use(ctx, args[0], args[1])
			}),
		simple("default PROVIDER/MODEL", "Make PROVIDER/MODEL the default model (saved)", cobra.RangeArgs(1, 2),
			func(ctx context.Context, h *modelcmd.Handler, args []string) error {
				return h.SetDefault(ctx, strings.Join(args, "/"))
			}),
		simple("status", "Show providers, models, key state and the secret store", cobra.NoArgs,
			func(ctx context.Context, h *modelcmd.Handler, args []string) error { return h.Status(ctx) }),
		simple("list", "List all models, marking the current one", cobra.NoArgs,
			func(ctx context.Context, h *modelcmd.Handler, args []string) error { return h.List(ctx) }),
		simple("refresh [PROVIDER]", "Add the models the provider's /models endpoint lists", cobra.MaximumNArgs(1),
			func(ctx context.Context, h *modelcmd.Handler, args []string) error {
				return h.Refresh(ctx, strings.Join(args, ""))
			}),
		simple("add-model PROVIDER MODEL", "Add a model name to a provider", cobra.ExactArgs(2),
			func(ctx context.Context, h *modelcmd.Handler, args []string) error {
				return h.AddModel(ctx, args[0], args[1])
			}),
		newModelSetCmd(stdio, &sessionID),
	)
	return cmd
}

func newModelConfigureCmd(stdio IO, sessionID *string) *cobra.Command {
	var (
		baseURL, models, def       string
		keyStdin, noKey, overwrite bool
	)
	cmd := &cobra.Command{
		Use:   "configure [NAME]",
		Short: "Configure a provider: base URL, models, API key, default model",
		Long: `Configure a provider. On a terminal, without flags, it asks for each setting
(the API key hidden) and saves once at the end.

For scripts, give the settings as flags:

  ` + configureFlagsHint + `

--api-key-stdin reads the key from standard input (hidden when that is a
terminal); --no-api-key says the provider needs none. A provider that is
already configured is replaced only with --overwrite (or after a question
on a terminal).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			scripted := fl.Changed("base-url") || fl.Changed("models") || fl.Changed("default") || keyStdin || noKey || overwrite
			return withModel(cmd.Context(), stdio, *sessionID, func(ctx context.Context, h *modelcmd.Handler) error {
				if !scripted {
					if h.Prompt == nil {
						return usagef("standard input is not a terminal, so mx-claw cannot ask; configure with flags: %s", configureFlagsHint)
					}
					if len(args) == 0 {
						return h.Wizard(ctx)
					}
					return h.Configure(ctx, args[0])
				}
				if len(args) == 0 {
					return usagef("name the provider: %s", configureFlagsHint)
				}
				if keyStdin && noKey {
					return usagef("--api-key-stdin and --no-api-key cannot be used together")
				}
				name := args[0]
				p := h.Config.Providers[name]
				in := modelcmd.ConfigureInput{Provider: name, BaseURL: baseURL, Models: config.ParseModelList(models), Default: def, NoAPIKey: noKey, Overwrite: overwrite}
				if p != nil {
					if in.BaseURL == "" {
						in.BaseURL = p.BaseURL
					}
					if len(in.Models) == 0 {
						in.Models = p.Models
					}
				}
				if in.BaseURL == "" {
					return usagef("provider %s has no base URL; pass --base-url URL (%s)", name, configureFlagsHint)
				}
				if len(in.Models) == 0 {
					return usagef("provider %s has no models; pass --models a,b (%s)", name, configureFlagsHint)
				}
				if p != nil && p.Configured && !overwrite {
					if h.Prompt == nil {
						return usagef("provider %s is already configured; pass --overwrite to replace its settings", name)
					}
					ok, err := h.Prompt.Confirm(ctx, fmt.Sprintf("Provider %s is already configured. Overwrite its settings?", name), false)
					if err != nil {
						return err
					}
					if !ok {
						fmt.Fprintln(stdio.Out, "Nothing changed.")
						return nil
					}
					in.Overwrite = true
				}
				if keyStdin {
					k, err := readKey(ctx, stdio, h, name)
					if err != nil {
						return err
					}
					in.APIKey = k
				} else if !noKey && p != nil && p.Kind == config.KindBuiltin && p.RequiresAPIKey {
					if _, _, err := h.Secrets.Get(ctx, name); errors.Is(err, secret.ErrNotFound) {
						return usagef("provider %s needs an API key: pass it on standard input with --api-key-stdin, or set %s", name, config.KeyEnvVars(name)[0])
					}
				}
				return h.ConfigureWith(ctx, in)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&baseURL, "base-url", "", "the provider's OpenAI-compatible API root, e.g. https://api.openai.com/v1")
	fl.StringVar(&models, "models", "", "model names, comma-separated")
	fl.StringVar(&def, "default", "", "the default model (default: the first of --models)")
	fl.BoolVar(&keyStdin, "api-key-stdin", false, "read the API key from standard input")
	fl.BoolVar(&noKey, "no-api-key", false, "the provider needs no API key (a stored one is deleted)")
	fl.BoolVar(&overwrite, "overwrite", false, "replace the settings of an already configured provider")
	return cmd
}

func newModelSetCmd(stdio IO, sessionID *string) *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "set PROVIDER api-key [KEY]",
		Short: "Store a provider's API key (asked hidden; --stdin reads it from standard input)",
		Long: `Store a provider's API key in the secret store (the OS keyring, else the
encrypted file). On a terminal the key is asked for without echo; --stdin
reads it from standard input. The old form with the KEY as an argument still
works, but leaves the key in your shell history.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] != "api-key" {
				return usagef("only the API key can be set: mx-claw model set %s api-key", args[0])
			}
			return withModel(cmd.Context(), stdio, *sessionID, func(ctx context.Context, h *modelcmd.Handler) error {
				switch {
				case len(args) == 3:
					return h.Run(ctx, []string{"set", args[0], "api-key", args[2]})
				case fromStdin:
					k, err := readKey(ctx, stdio, h, args[0])
					if err != nil {
						return err
					}
					return h.SetAPIKey(ctx, args[0], k)
				case h.Prompt == nil:
					return usagef("standard input is not a terminal, so mx-claw cannot ask for the key; pipe it in: mx-claw model set %s api-key --stdin", args[0])
				}
				return h.SetAPIKey(ctx, args[0], "")
			})
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the key from standard input")
	return cmd
}

// readKey reads an API key from standard input: hidden when it is a
// terminal, else its whole content (trimmed).
func readKey(ctx context.Context, stdio IO, h *modelcmd.Handler, provider string) (string, error) {
	var k string
	if h.Prompt != nil {
		var err error
		if k, err = h.Prompt.Secret(ctx, fmt.Sprintf("API Key for %s (input hidden):", provider)); err != nil {
			return "", err
		}
	} else {
		if stdio.In == nil {
			return "", usagef("no standard input to read the API key from")
		}
		data, err := io.ReadAll(io.LimitReader(stdio.In, maxKeyBytes+1))
		if err != nil {
			return "", fmt.Errorf("read the API key from standard input: %w", err)
		}
		if len(data) > maxKeyBytes {
			return "", usagef("standard input holds more than %d KiB; it is not an API key", maxKeyBytes>>10)
		}
		k = string(data)
	}
	if k = strings.TrimSpace(k); k == "" {
		return "", usagef("no API key on standard input")
	}
	return k, nil
}

// withModel builds a model handler (config snapshot, secret chain, a
// terminal prompter when stdin is one, the --session session) and runs f,
// mapping its errors to exit codes.
func withModel(ctx context.Context, stdio IO, sessionID string, f func(context.Context, *modelcmd.Handler) error) error {
	home, err := config.Home()
	if err != nil {
		return usageErr(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		return usageErr(err)
	}
	secrets, err := app.NewSecrets(home)
	if err != nil {
		return usageErr(err)
	}
	h := &modelcmd.Handler{Config: cfg, Secrets: secrets, Out: stdio.Out, Prefix: "mx-claw model"}
	// A real terminal, not just a character device such as /dev/null.
	if in, ok := stdio.In.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		h.Prompt = newTermPrompter(in, stdio.Err)
		h.Probe = app.ProbeModel // the wizard tests what it is given
	}
	if sessionID != "" {
		sess, closeStore, err := openSession(ctx, home, sessionID)
		if err != nil {
			return err
		}
		defer closeStore()
		h.Session = sess
	}
	return modelError(f(ctx, h))
}

// modelError maps the handlers' errors to exit codes: usage and broken
// secret stores 2, cancelling 130, the rest (network) 1.
func modelError(err error) error {
	var ue *modelcmd.UsageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue), errors.Is(err, secret.ErrDamaged):
		return usageErr(err)
	case errors.Is(err, modelcmd.ErrCancelled), errors.Is(err, context.Canceled):
		return &exitError{code: ExitCancelled, err: errors.New("cancelled; nothing was saved")}
	}
	return err
}

// storeSession is a stored session whose model the model commands change.
type storeSession struct {
	st    store.Store
	sess  *protocol.Session
	owner string
}

func openSession(ctx context.Context, home, id string) (*storeSession, func(), error) {
	st, err := app.OpenStore(ctx, home)
	if err != nil {
		return nil, nil, err
	}
	sess, err := st.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		st.Close()
		return nil, nil, usagef("session %s does not exist; `mx-claw sessions list` shows the sessions", id)
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return &storeSession{st: st, sess: sess, owner: store.NewOwner()}, func() { st.Close() }, nil
}

// Model returns the session's model.
func (s *storeSession) Model() string { return s.sess.Model }

// SetModel stores the session's new model, holding the session's lease
// meanwhile so that a turn running in another process is not overwritten.
func (s *storeSession) SetModel(ctx context.Context, id string) error {
	if _, err := s.st.AcquireLease(ctx, s.sess.ID, s.owner, 30*time.Second); err != nil {
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			return fmt.Errorf("session %s is busy (%v); change its model when its turn has ended", s.sess.ID, err)
		}
		return err
	}
	defer s.st.ReleaseLease(context.WithoutCancel(ctx), s.sess.ID, s.owner)
	cur, err := s.st.GetSession(ctx, s.sess.ID)
	if err != nil {
		return err
	}
	cur.Model = id
	if err := s.st.UpdateSession(ctx, cur); err != nil {
		return err
	}
	s.sess = cur
	return nil
}

// termPrompter asks on a terminal: menus as numbered lists, hidden input
// for secrets. Questions go to out (stderr), so stdout keeps only results.
type termPrompter struct {
	in  *os.File
	r   *bufio.Reader
	out io.Writer
}

func newTermPrompter(in *os.File, out io.Writer) *termPrompter {
	return &termPrompter{in: in, r: bufio.NewReader(in), out: out}
}

// readLine reads one line; Ctrl-C (ctx) and end of input cancel.
func (p *termPrompter) readLine(ctx context.Context) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := p.r.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", modelcmd.ErrCancelled
	case r := <-ch:
		if r.err != nil {
			fmt.Fprintln(p.out)
			return "", modelcmd.ErrCancelled
		}
		return strings.TrimSpace(r.s), nil
	}
}

// Select shows a numbered menu; Enter takes the current option.
func (p *termPrompter) Select(ctx context.Context, title string, options []modelcmd.Option) (string, error) {
	def := 1
	fmt.Fprintf(p.out, "? %s\n", title)
	for i, o := range options {
		mark := " "
		if o.Current {
			mark, def = ">", i+1
		}
		fmt.Fprintf(p.out, " %s %d) %s\n", mark, i+1, o.Label)
	}
	for {
		fmt.Fprintf(p.out, "Choose 1-%d [%d]: ", len(options), def)
		line, err := p.readLine(ctx)
		if err != nil {
			return "", err
		}
		if line == "" {
			return options[def-1].Value, nil
		}
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(options) {
			return options[n-1].Value, nil
		}
		for _, o := range options {
			if line == o.Value {
				return o.Value, nil
			}
		}
		fmt.Fprintf(p.out, "Type a number from 1 to %d.\n", len(options))
	}
}

// Input asks for a line; Enter takes def.
func (p *termPrompter) Input(ctx context.Context, label, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", label, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", label)
	}
	line, err := p.readLine(ctx)
	if err != nil {
		return "", err
	}
	if line == "" {
		return def, nil
	}
	return line, nil
}

// Secret reads a line with echo off. Pasting works; nothing is shown.
func (p *termPrompter) Secret(ctx context.Context, label string) (string, error) {
	fd := int(p.in.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return "", fmt.Errorf("read hidden input: %w", err)
	}
	fmt.Fprintf(p.out, "%s ", label)
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		ch <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		fmt.Fprintln(p.out)
		return "", modelcmd.ErrCancelled
	case r := <-ch:
		fmt.Fprintln(p.out)
		if r.err != nil {
			return "", modelcmd.ErrCancelled
		}
		return strings.TrimSpace(string(r.b)), nil
	}
}

// Confirm asks a yes/no question; Enter takes def.
func (p *termPrompter) Confirm(ctx context.Context, question string, def bool) (bool, error) {
	hint := "y/N"
	if def {
		hint = "Y/n"
	}
	for {
		fmt.Fprintf(p.out, "%s [%s]: ", question, hint)
		line, err := p.readLine(ctx)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(line) {
		case "":
			return def, nil
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
	}
}
