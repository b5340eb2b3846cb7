package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxDocument caps a file sent to a server.
const maxDocument = 4 << 20

// settle is how long diagnostics must stay unchanged after a server
// published them for a document's version before they count as final:
// servers publish quick syntax errors first and type errors after.
const settle = 200 * time.Millisecond

// Diagnostic is one problem a server reports in a file.
type Diagnostic struct {
	// Line and Column are 1-based.
	Line, Column int
	// Severity is 1 (error), 2 (warning), 3 (information) or 4 (hint).
	Severity int
	Source   string
	Code     string
	Message  string
}

// IsError reports whether d is an error (a server that gives no severity
// means an error).
func (d Diagnostic) IsError() bool { return d.Severity <= 1 }

// key identifies d without its position, which an edit elsewhere moves.
func (d Diagnostic) key() string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.Severity, d.Source, d.Code, d.Message)
}

// wireDiagnostic is a diagnostic as the protocol sends it.
type wireDiagnostic struct {
	Range struct {
		Start struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"start"`
	} `json:"range"`
	Severity int             `json:"severity"`
	Code     json.RawMessage `json:"code"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
}

// published is a server's latest diagnostics of one document.
type published struct {
	version int // 0 when the server sent none
	seq     uint64
	at      time.Time
	diags   []Diagnostic
}

// document is a file open in a server.
type document struct {
	version int
	text    string
}

// server is one running language server for one workspace root.
type server struct {
	cfg  ServerConfig
	root string
	cmd  *exec.Cmd
	conn *conn

	mu        sync.Mutex
	docs      map[string]*document  // by URI
	published map[string]*published // by URI
	seq       uint64
	changed   chan struct{} // closed and replaced at every publication
	lastUse   time.Time
	stderr    tail
}

// start runs the server for root and initializes it.
func start(ctx context.Context, cfg ServerConfig, root string, env []string, timeout time.Duration) (*server, error) {
	path, err := lookPath(cfg.Command, env)
	if err != nil {
		return nil, &NotInstalledError{Server: cfg.Name, Command: cfg.Command}
	}
	cmd := exec.Command(path, cfg.Args...)
	cmd.Dir = root
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, root: root, cmd: cmd, docs: map[string]*document{}, published: map[string]*published{},
		changed: make(chan struct{}), lastUse: time.Now()}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	s.conn = newConn(stdin)
	s.conn.notify = s.notification
	s.conn.request = s.request
	go s.conn.read(stdout)
	go func() {
		<-s.conn.done
		_ = stdin.Close()
	}()
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.initialize(ictx); err != nil {
		s.kill()
		if msg := s.stderr.String(); msg != "" {
			err = fmt.Errorf("%w (its stderr: %s)", err, msg)
		}
		return nil, fmt.Errorf("initialize %s: %w", cfg.Name, err)
	}
	return s, nil
}

// lookPath finds a server's command on PATH, or, for a bare name, where
// `go install` puts programs (GOBIN, GOPATH/bin, ~/go/bin), which is
// often not on the PATH a program inherits.
func lookPath(command string, env []string) (string, error) {
	path, err := exec.LookPath(command)
	if err == nil || strings.ContainsRune(command, filepath.Separator) {
		return path, err
	}
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	var dirs []string
	if b := get("GOBIN"); b != "" {
		dirs = append(dirs, b)
	}
	for _, p := range filepath.SplitList(get("GOPATH")) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	if h := get("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", err
}

// fileURI returns the file URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

func (s *server) initialize(ctx context.Context) error {
	folder := map[string]any{"uri": fileURI(s.root), "name": filepath.Base(s.root)}
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "mx-claw"},
		"rootUri":          fileURI(s.root),
		"rootPath":         s.root,
		"workspaceFolders": []any{folder},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"dynamicRegistration": false, "didSave": false},
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
			},
			"workspace": map[string]any{"workspaceFolders": true, "configuration": true},
			"window":    map[string]any{"workDoneProgress": false},
		},
	}
	var res json.RawMessage
	if err := s.conn.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	return s.conn.Notify("initialized", map[string]any{})
}

// request answers what a server asks of the client: empty answers, so
// that it uses its defaults.
func (s *server) request(method string, params json.RawMessage) (any, error) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		return make([]any, len(p.Items)), nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create":
		return nil, nil
	case "workspace/workspaceFolders":
		return []any{map[string]any{"uri": fileURI(s.root), "name": filepath.Base(s.root)}}, nil
	case "window/showMessageRequest":
		return nil, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found: " + method}
}

// notification records the diagnostics a server publishes.
func (s *server) notification(method string, params json.RawMessage) {
	if method != "textDocument/publishDiagnostics" {
		return
	}
	var p struct {
		URI         string           `json:"uri"`
		Version     *int             `json:"version"`
		Diagnostics []wireDiagnostic `json:"diagnostics"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	diags := make([]Diagnostic, 0, len(p.Diagnostics))
	for _, w := range p.Diagnostics {
		code := strings.Trim(string(w.Code), `"`)
		if code == "null" {
			code = ""
		}
		diags = append(diags, Diagnostic{Line: w.Range.Start.Line + 1, Column: w.Range.Start.Character + 1,
			Severity: w.Severity, Source: w.Source, Code: code, Message: strings.TrimSpace(w.Message)})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	pub := &published{seq: s.seq, at: time.Now(), diags: diags}
	if p.Version != nil {
		pub.version = *p.Version
	}
	s.published[p.URI] = pub
	close(s.changed)
	s.changed = make(chan struct{})
}

// alive reports whether the server's connection is up.
func (s *server) alive() bool { return !isClosed(s.conn.done) }

// diagnose brings the server's copy of the file at path up to date with
// the disk and returns its diagnostics once they have settled; ok is
// false when the server gave none within ctx. A file that no longer
// exists is closed and has none.
func (s *server) diagnose(ctx context.Context, path string) (diags []Diagnostic, ok bool, err error) {
	uri := fileURI(path)
	s.mu.Lock()
	s.lastUse = time.Now()
	s.mu.Unlock()
	data, rerr := os.ReadFile(path)
	switch {
	case errors.Is(rerr, os.ErrNotExist):
		s.mu.Lock()
		_, open := s.docs[uri]
		delete(s.docs, uri)
		delete(s.published, uri)
		s.mu.Unlock()
		if open {
			err = s.conn.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
		}
		return nil, true, err
	case rerr != nil:
		return nil, false, rerr
	case len(data) > maxDocument:
		return nil, false, fmt.Errorf("%s is larger than %d bytes", path, maxDocument)
	}
	text := string(data)
	s.mu.Lock()
	doc, open := s.docs[uri]
	var since uint64
	if p := s.published[uri]; p != nil {
		since = p.seq
	}
	switch {
	case !open:
		doc = &document{version: 1, text: text}
		s.docs[uri] = doc
		s.mu.Unlock()
		err = s.conn.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": s.cfg.languageID(path), "version": doc.version, "text": text}})
		since = 0
	case doc.text != text:
		doc.version++
		doc.text = text
		v := doc.version
		s.mu.Unlock()
		err = s.conn.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": v},
			"contentChanges": []any{map[string]any{"text": text}}})
	default:
		// Unchanged: what the server said of this version stands.
		p := s.published[uri]
		if p != nil && (p.version == 0 || p.version >= doc.version) && time.Since(p.at) >= settle {
			s.mu.Unlock()
			return p.diags, true, nil
		}
		s.mu.Unlock()
		since = 0
	}
	if err != nil {
		return nil, false, err
	}
	d, ok := s.wait(ctx, uri, since)
	return d, ok, nil
}

// wait waits for diagnostics of uri newer than publication since, for
// the document's current version, unchanged for settle.
func (s *server) wait(ctx context.Context, uri string, since uint64) ([]Diagnostic, bool) {
	for {
		s.mu.Lock()
		p, ch := s.published[uri], s.changed
		doc := s.docs[uri]
		s.mu.Unlock()
		var wait <-chan time.Time
		if p != nil && p.seq > since && doc != nil && (p.version == 0 || p.version >= doc.version) {
			quiet := time.Since(p.at)
			if quiet >= settle {
				return p.diags, true
			}
			wait = time.After(settle - quiet)
		}
		select {
		case <-ch:
		case <-wait:
		case <-s.conn.done:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// stop shuts the server down politely, then kills it.
func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s.alive() {
		if err := s.conn.Call(ctx, "shutdown", nil, nil); err == nil {
			_ = s.conn.Notify("exit", nil)
		}
	}
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		s.kill()
		<-done
	}
}

// kill ends the server's process group.
func (s *server) kill() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Process.Kill()
	}
}

// tail keeps the last bytes written to it (a server's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = t.buf[len(t.buf)-tailMax:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

var _ io.Writer = (*tail)(nil)

// NotInstalledError says a configured server's command is not on PATH.
type NotInstalledError struct {
	Server, Command string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("the language server %s is not installed (no %q on PATH)", e.Server, e.Command)
}
