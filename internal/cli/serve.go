package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/server"
	"github.com/mx-claw/mx-claw/internal/server/web"
)

// shutdownTimeout bounds the graceful end of `mx-claw serve`.
const shutdownTimeout = 20 * time.Second

type serveFlags struct {
	addr        string
	open        bool
	allowRemote bool
	sandbox     string
}

func newServeCmd(stdio IO) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API, its event streams and the web panel",
		Long: `Serve mx-claw's HTTP API (sessions, messages, approvals, models, settings),
live session event streams (SSE) and the web panel, on loopback by default.

A random token guards every API route (or MX_CLAW_SERVE_TOKEN, for workers
that share one); it is printed once in the login URL and written to
$MX_CLAW_HOME/server.json (mode 0600) while the server runs. Only
Host names localhost, 127.0.0.1 and [::1] with the server's port are answered,
cross-origin requests are refused and there is no CORS.

Stop it with Ctrl-C (SIGINT) or SIGTERM: running turns are cancelled and
stored as cancelled, event streams get a last event, server.json is removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd.Context(), stdio, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	fl.BoolVar(&f.open, "open", false, "open the panel in a browser")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback address (anyone who can reach it and has the token drives mx-claw)")
	AddSandboxFlag(fl, &f.sandbox)
	return cmd
}

func serve(ctx context.Context, stdio IO, f serveFlags) error {
	sbMode, err := SandboxMode(f.sandbox)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usagef("--addr %q: %v", f.addr, err)
	}
	if !isLoopback(host) && !f.allowRemote {
		return usagef("--addr %s is not a loopback address: anyone who can reach it could drive mx-claw; pass --allow-remote to mean it", f.addr)
	}
	a, err := openApp(ctx, app.Options{SandboxMode: sbMode,
		Logger: slog.New(slog.NewTextHandler(stdio.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("listen on %s: %v", f.addr, err)
	}
	token := os.Getenv(ServeTokenEnv)
	if token != "" && len(token) < 32 {
		ln.Close()
		return usagef("%s is too short to guard the server: use at least 32 random characters", ServeTokenEnv)
	}
	srv, err := server.New(server.Options{App: a, Token: token, AllowRemote: f.allowRemote, Web: web.FS(), CSP: web.CSP,
		Logger: slog.New(slog.NewTextHandler(stdio.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		ln.Close()
		return err
	}
	if f.allowRemote && !isLoopback(host) {
		fmt.Fprintf(stdio.Err, "Warning: listening on %s, beyond this machine. Anyone who can reach it and has the token can run commands as you.\n", ln.Addr())
	}
	url := serverURL(ln.Addr().(*net.TCPAddr))
	pid := os.Getpid()
	if err := server.WriteInfo(a.Home, protocol.ServerInfo{URL: url, Token: srv.Token(), PID: pid}); err != nil {
		ln.Close()
		return fmt.Errorf("write server.json: %w", err)
	}
	defer server.RemoveInfo(a.Home, pid)
	login := url + "/login?token=" + srv.Token()
	fmt.Fprintf(stdio.Out, "mx-claw serve: listening on %s\n", url)
	fmt.Fprintf(stdio.Out, "Open the panel: %s\n", login)
	fmt.Fprintf(stdio.Out, "API token in %s (mode 0600). Stop with Ctrl-C.\n", filepath.Join(a.Home, server.InfoFileName))
	if f.open {
		if err := openBrowser(login); err != nil {
			fmt.Fprintf(stdio.Err, "Could not open a browser (%v); open the URL above.\n", err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		srv.Shutdown(sctx)
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdio.Err, "Stopping: cancelling running turns…")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stdio.Err, "Stopped with an error: %v\n", err)
	}
	if err := <-served; err != nil {
		return err
	}
	fmt.Fprintln(stdio.Err, "Stopped.")
	return nil
}

// ServeTokenEnv, if set, is the token of `mx-claw serve` instead of a random
// one: workers behind one load balancer share it, so a client (an event
// stream reconnecting) may reach any of them.
const ServeTokenEnv = "MX_CLAW_SERVE_TOKEN"

// isLoopback reports whether a listen host is a loopback address or
// localhost; the empty host (all interfaces) is not.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serverURL is the URL clients on this machine use: a loopback address
// with the port, also when the server listens on every interface.
func serverURL(addr *net.TCPAddr) string {
	port := strconv.Itoa(addr.Port)
	switch {
	case addr.IP.IsLoopback() && addr.IP.To4() == nil:
		return "http://[::1]:" + port
	default:
		return "http://127.0.0.1:" + port
	}
}

// openBrowser opens url in the user's browser, without waiting for it.
func openBrowser(url string) error {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return errors.New("no " + name + " on PATH")
	}
	cmd := exec.Command(path, append(args, url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
