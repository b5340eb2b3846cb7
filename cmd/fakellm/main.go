// Command fakellm serves a scripted fake OpenAI-compatible model on a
// loopback port, so that end-to-end tests and benchmarks can run the real
// mx-claw binary without a provider:
//
//	fakellm --addr 127.0.0.1:0 --script FILE.json [--log FILE.jsonl] [--models a,b]
//
// It prints the base URL ("http://127.0.0.1:PORT/v1") as the first line
// on stdout, then serves until SIGINT or SIGTERM. Chat requests get the
// script's replies in order, then the script's fallback or the text "ok".
// The script format is llmtest.Script; without --script every request
// gets the fallback. A request whose tool calls and results are not paired
// is answered 400, as providers answer it (llmtest.CheckChat). With --log, one JSON object per request is appended
// to the file: ts (arrival, Unix seconds), method, path, bytes (body
// size), model, stream, messages (count) and tools (names offered).
//
// It is a test tool built on internal/llm/llmtest; nothing imports it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

// usageError is a mistake in the command line.
type usageError struct{ error }

// run is the whole command: it serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	scriptPath := fs.String("script", "", "JSON script of replies, {\"replies\": [...]}")
	logPath := fs.String("log", "", "append one JSON line per request to this `file`")
	models := fs.String("models", "", "comma-separated model `ids` for /v1/models (default: the script's, or fake-model)")
	closeConns := fs.Bool("close-connections", false, "end every connection after its answer (Connection: close), as some simple servers do")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}

	script := &llmtest.Script{}
	if *scriptPath != "" {
		data, err := os.ReadFile(*scriptPath)
		if err != nil {
			return err
		}
		if script, err = llmtest.ParseScript(data); err != nil {
			return fmt.Errorf("%s: %w", *scriptPath, err)
		}
	}
	var logFile *os.File
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		logFile = f
	}

	s, err := llmtest.Listen(*addr, script.Replies...)
	if err != nil {
		return err
	}
	defer s.Close()
	s.RecordBodies(false) // nothing reads them back; keep long runs small
	s.SetCloseConnections(*closeConns)
	if *models != "" {
		s.SetModels(strings.Split(*models, ",")...)
	} else if len(script.Models) > 0 {
		s.SetModels(script.Models...)
	}
	if fb := script.Fallback; fb != nil {
		s.SetResponder(func(*llmtest.Request) llmtest.Reply { return *fb })
	}
	if logFile != nil {
		s.OnRequest(newLogger(logFile, stderr))
	}

	if _, err := fmt.Fprintln(stdout, s.URL()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fakellm: serving %d scripted replies at %s\n", len(script.Replies), s.URL())
	<-ctx.Done()
	return nil
}

// logLine is one line of the --log file.
type logLine struct {
	TS       float64  `json:"ts"`
	Method   string   `json:"method"`
	Path     string   `json:"path"`
	Bytes    int      `json:"bytes"`
	Model    string   `json:"model,omitempty"`
	Stream   bool     `json:"stream"`
	Messages int      `json:"messages"`
	Tools    []string `json:"tools"`
}

// newLogger returns an OnRequest hook that appends a logLine to w for
// each request. Write errors are reported once on stderr.
func newLogger(w io.Writer, stderr io.Writer) func(*llmtest.Request) {
	var mu sync.Mutex
	failed := false
	return func(r *llmtest.Request) {
		l := logLine{
			TS:     float64(r.Time.UnixMicro()) / 1e6,
			Method: r.Method,
			Path:   r.Path,
			Bytes:  r.Size,
			Tools:  []string{},
		}
		if c := r.Chat; c != nil {
			l.Model, l.Stream, l.Messages = c.Model, c.Stream, c.NumMessages
			if c.Tools != nil {
				l.Tools = c.Tools
			}
		}
		data, err := json.Marshal(l)
		if err != nil {
			panic(err) // a logLine always marshals
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.Write(append(data, '\n')); err != nil && !failed {
			failed = true
			fmt.Fprintln(stderr, "fakellm: log:", err)
		}
	}
}
