package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestCreateListShowSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Text("answer one"))
	s := f.newSession()
	if s.ID == "" || s.Workspace != f.ws || s.Model != "fake/fake-model" || s.Status != protocol.StatusIdle {
		t.Fatalf("created %+v", s)
	}
	// A model may be chosen; symbolic links are resolved.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(f.ws, link); err != nil {
		t.Fatal(err)
	}
	var s2 protocol.Session
	f.mustAPI("POST", "/api/sessions", protocol.CreateSession{Workspace: link, Model: "fake/other-model"}, &s2, http.StatusCreated)
	if s2.Workspace != f.ws || s2.Model != "fake/other-model" {
		t.Errorf("created %+v", s2)
	}
	// A name no hexadecimal session id can contain (t.TempDir's are
	// numbers such as 004).
	other := filepath.Join(t.TempDir(), "other-workspace")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	var s3 protocol.Session
	f.mustAPI("POST", "/api/sessions", protocol.CreateSession{Workspace: other}, &s3, http.StatusCreated)

	// A turn gives the first session its title.
	var acc protocol.MessageAccepted
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "Fix the parser please"}, &acc, http.StatusAccepted)
	f.waitIdle(s.ID)

	var list protocol.SessionList
	f.mustAPI("GET", "/api/sessions", nil, &list, http.StatusOK)
	if len(list.Sessions) != 3 {
		t.Fatalf("listed %d sessions, want 3", len(list.Sessions))
	}
	for q, want := range map[string][]string{
		"parser":                  {s.ID},
		"PARSER":                  {s.ID},
		filepath.Base(other):      {s3.ID},
		"no such thing":           {},
		"?limit=1":                nil, // checked below
		filepath.Base(f.ws) + "x": {},
	} {
		if strings.HasPrefix(q, "?") {
			continue
		}
		var got protocol.SessionList
		f.mustAPI("GET", "/api/sessions?q="+url.QueryEscape(q), nil, &got, http.StatusOK)
		ids := []string{}
		for _, x := range got.Sessions {
			ids = append(ids, x.ID)
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("search %q: %v, want %v", q, ids, want)
		}
	}
	var one protocol.SessionList
	f.mustAPI("GET", "/api/sessions?limit=1", nil, &one, http.StatusOK)
	if len(one.Sessions) != 1 || one.Sessions[0].ID != s.ID {
		t.Errorf("limit=1: %+v, want the most recently updated", one.Sessions)
	}
	var inWS protocol.SessionList
	f.mustAPI("GET", "/api/sessions?workspace="+other, nil, &inWS, http.StatusOK)
	if len(inWS.Sessions) != 1 || inWS.Sessions[0].ID != s3.ID {
		t.Errorf("workspace filter: %+v", inWS.Sessions)
	}

	var d protocol.SessionDetail
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
	if d.Session.ID != s.ID || d.Session.Title != "Fix the parser please" || d.PendingApprovals == nil {
		t.Errorf("detail %+v", d)
	}
	var roles []string
	for _, m := range d.Messages {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, ",") != "system,user,assistant" || d.Messages[2].Content != "answer one" {
		t.Errorf("messages %v", d.Messages)
	}
	// The answer's shape is exactly the contract's.
	var raw map[string]json.RawMessage
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &raw, http.StatusOK)
	if len(raw) != 3 || raw["session"] == nil || raw["messages"] == nil || raw["pendingApprovals"] == nil {
		t.Errorf("GET session keys %v", keys(raw))
	}
}

func keys(m map[string]json.RawMessage) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBadInputIsAClearJSONError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s := f.newSession()
	file := filepath.Join(f.ws, "file.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	cases := []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"POST", "/api/sessions", `{}`, 400, protocol.CodeWorkspaceNotFound},
		{"POST", "/api/sessions", `{"workspace":"relative/dir"}`, 400, protocol.CodeWorkspaceNotFound},
		{"POST", "/api/sessions", `{"workspace":"/no/such/dir/anywhere"}`, 400, protocol.CodeWorkspaceNotFound},
		{"POST", "/api/sessions", `{"workspace":"` + file + `"}`, 400, protocol.CodeWorkspaceNotFound},
		{"POST", "/api/sessions", `{"workspace":"` + f.ws + `","model":"fake/nope"}`, 400, protocol.CodeProviderNotReady},
		{"POST", "/api/sessions", `{"workspace":"` + f.ws + `","model":"keyed/k1"}`, 400, protocol.CodeProviderNotReady},
		{"POST", "/api/sessions", `{"workspace":"` + f.ws + `","extra":1}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions", `{"workspace":`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions", ``, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions", `{"workspace":"` + f.ws + `"} {}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions", `"` + strings.Repeat("x", maxBody+10) + `"`, 413, protocol.CodeTooLarge},
		{"GET", "/api/sessions?limit=0", nil, 400, protocol.CodeBadRequest},
		{"GET", "/api/sessions/nope", nil, 404, protocol.CodeSessionNotFound},
		{"POST", "/api/sessions/nope/messages", `{"text":"hi"}`, 404, protocol.CodeSessionNotFound},
		{"POST", "/api/sessions/" + s.ID + "/messages", `{"text":"  "}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions/" + s.ID + "/messages", `{"txt":"hi"}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions/nope/cancel", ``, 404, protocol.CodeSessionNotFound},
		{"POST", "/api/sessions/" + s.ID + "/cancel", `{"x":1}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions/" + s.ID + "/approvals/nope", `{"decision":"allow"}`, 404, protocol.CodeApprovalNotFound},
		{"POST", "/api/sessions/" + s.ID + "/approvals/nope", `{"decision":"maybe"}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions/" + s.ID + "/approvals/nope", `{"decision":"allow","scope":"forever"}`, 400, protocol.CodeBadRequest},
		{"POST", "/api/sessions/nope/approvals/x", `{"decision":"allow"}`, 404, protocol.CodeSessionNotFound},
		{"PUT", "/api/sessions/" + s.ID + "/model", `{"model":"fake/nope"}`, 400, protocol.CodeProviderNotReady},
		{"PUT", "/api/sessions/" + s.ID + "/model", `{"model":""}`, 400, protocol.CodeBadRequest},
		{"PUT", "/api/sessions/nope/model", `{"model":"fake/other-model"}`, 404, protocol.CodeSessionNotFound},
		{"GET", "/api/sessions/nope/events", nil, 404, protocol.CodeSessionNotFound},
		{"GET", "/api/sessions/" + s.ID + "/events?after=x", nil, 400, protocol.CodeBadRequest},
		{"GET", "/api/sessions/" + s.ID + "/events?after=-1", nil, 400, protocol.CodeBadRequest},
		{"GET", "/api/sessions/" + s.ID + "/events?after=99", nil, 400, protocol.CodeBadRequest},
		{"GET", "/api/sessions/nope/queued", nil, 404, protocol.CodeSessionNotFound},
		{"DELETE", "/api/sessions/" + s.ID + "/queued/x", nil, 400, protocol.CodeBadRequest},
		{"DELETE", "/api/sessions/" + s.ID + "/queued/99", nil, 404, protocol.CodeQueuedNotFound},
		{"PUT", "/api/settings", `{"permissions":{"defaultMode":"yolo"}}`, 400, protocol.CodeInvalidSettings},
		{"PUT", "/api/settings", `{"permissions":{"allow":["run_command("]}}`, 400, protocol.CodeInvalidSettings},
		{"PUT", "/api/settings", `{"apiKeys":{"nope":"k"}}`, 400, protocol.CodeInvalidSettings},
		{"PUT", "/api/settings", `{"defaultModel":"fake/nope"}`, 400, protocol.CodeInvalidSettings},
		{"PUT", "/api/settings", `{"apiKey":"k"}`, 400, protocol.CodeBadRequest},
		{"DELETE", "/api/sessions", nil, 405, protocol.CodeMethodNotAllowed},
		{"POST", "/api/models", `{}`, 405, protocol.CodeMethodNotAllowed},
		{"GET", "/api/sessions/" + s.ID + "/messages", nil, 405, protocol.CodeMethodNotAllowed},
		{"GET", "/api/nothing", nil, 404, protocol.CodeNotFound},
	}
	for _, c := range cases {
		resp, data := f.request(c.method, c.path, c.body, f.auth())
		what := c.method + " " + c.path
		if len(what) > 100 {
			what = what[:100]
		}
		checkError(t, what, resp, data, c.status, c.code)
		if c.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", what)
		}
	}
	// Nothing was written by the refused settings.
	if _, err := os.Stat(filepath.Join(f.home, "settings.json")); !os.IsNotExist(err) {
		t.Errorf("a refused settings change wrote settings.json (%v)", err)
	}
	if n := len(f.llm.ChatRequests()); n != 0 {
		t.Errorf("%d model requests from refused input", n)
	}
}

func TestMessageRunsATurnAndQueuesWhileBusy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil,
		llmtest.Reply{Text: "first answer, slowly", Pieces: 10, ChunkDelay: 200 * time.Millisecond},
		llmtest.Text("second answer"),
	)
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	var acc protocol.MessageAccepted
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "one"}, &acc, http.StatusAccepted)
	if acc.TurnID == "" || acc.Queued {
		t.Fatalf("first message: %+v", acc)
	}
	var q protocol.MessageAccepted
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "two"}, &q, http.StatusAccepted)
	if !q.Queued || q.TurnID != "" {
		t.Fatalf("second message while busy: %+v", q)
	}
	var ql protocol.QueuedList
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/queued", nil, &ql, http.StatusOK)
	if len(ql.Queued) != 1 || ql.Queued[0].Content != "two" {
		t.Errorf("queued %+v", ql)
	}
	evs := c.until(protocol.EventTurnCompleted)
	if evs[len(evs)-1].TurnID != acc.TurnID {
		t.Errorf("the first turn.completed is of turn %s, want %s", evs[len(evs)-1].TurnID, acc.TurnID)
	}
	evs = c.until(protocol.EventTurnCompleted)
	var user, answer string
	for _, e := range evs {
		if e.Type == protocol.EventMessageCompleted && e.Message != nil {
			if e.Message.Role == protocol.RoleUser {
				user = e.Message.Content
			} else {
				answer = e.Message.Content
			}
		}
	}
	if user != "two" || answer != "second answer" {
		t.Errorf("queued turn: user %q, answer %q", user, answer)
	}
	f.waitIdle(s.ID)
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/queued", nil, &ql, http.StatusOK)
	if len(ql.Queued) != 0 {
		t.Errorf("still queued: %+v", ql)
	}
}

func TestRemoveQueuedMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "slow", Hang: true})
	s := f.newSession()
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "one"}, nil, http.StatusAccepted)
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "two"}, nil, http.StatusAccepted)
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "three"}, nil, http.StatusAccepted)
	var ql protocol.QueuedList
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/queued", nil, &ql, http.StatusOK)
	if len(ql.Queued) != 2 {
		t.Fatalf("queued %+v", ql)
	}
	path := "/api/sessions/" + s.ID + "/queued/" + itoa(ql.Queued[0].ID)
	f.mustAPI("DELETE", path, nil, nil, http.StatusNoContent)
	resp, data := f.request("DELETE", path, nil, f.auth())
	checkError(t, "second delete", resp, data, 404, protocol.CodeQueuedNotFound)
	// Cancel: the turn is stored as cancelled and the message still queued
	// is given back (input.returned, for the client's input box), not sent
	// after the next message (issue 18). (The hanging answer is cancelled
	// once the model has it, so the next turn gets the next answer.)
	for deadline := time.Now().Add(20 * time.Second); len(f.llm.ChatRequests()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the turn never asked the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var cr protocol.CancelResult
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/cancel", nil, &cr, http.StatusAccepted)
	if !cr.Cancelled {
		t.Errorf("cancel: %+v", cr)
	}
	f.waitIdle(s.ID)
	if st := f.waitStatus(s.ID, protocol.StatusCancelled); st.Status != protocol.StatusCancelled {
		t.Fatal(st.Status)
	}
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/queued", nil, &ql, http.StatusOK)
	if len(ql.Queued) != 0 {
		t.Fatalf("queue after cancel %+v, want it given back", ql)
	}
	returned := false
	for _, e := range f.storedEvents(s.ID) {
		if e.Type == protocol.EventInputReturned && len(e.Queued) == 1 && e.Queued[0].Content == "three" {
			returned = true
		}
	}
	if !returned {
		t.Error("the queued message was not given back with input.returned")
	}
	f.llm.Enqueue(llmtest.Text("done"))
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "four"}, nil, http.StatusAccepted)
	f.waitIdle(s.ID)
	reqs := f.llm.ChatRequests()
	last := reqs[len(reqs)-1].Chat.Messages
	if got := last[len(last)-1].Content; got != "four" {
		t.Errorf("the next turn sent %q, want only the new message", got)
	}
	// Nothing to cancel now.
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/cancel", nil, &cr, http.StatusOK)
	if cr.Cancelled {
		t.Error("cancelled an idle session")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestModelSwitch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "slow", Hang: true}, llmtest.Text("again"))
	s := f.newSession()
	var mc protocol.ModelChanged
	f.mustAPI("PUT", "/api/sessions/"+s.ID+"/model", protocol.SetModel{Model: "fake/other-model"}, &mc, http.StatusOK)
	if mc.Session.Model != "fake/other-model" || mc.Pending {
		t.Errorf("switch: %+v", mc)
	}
	if got, _ := f.app.Store.GetSession(context.Background(), s.ID); got.Model != "fake/other-model" {
		t.Errorf("stored model %s", got.Model)
	}
	// While a turn runs, the switch applies from the next turn.
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "go"}, nil, http.StatusAccepted)
	f.mustAPI("PUT", "/api/sessions/"+s.ID+"/model", protocol.SetModel{Model: "fake/fake-model"}, &mc, http.StatusOK)
	if !mc.Pending || mc.Session.Model != "fake/fake-model" {
		t.Errorf("switch during a turn: %+v", mc)
	}
	for deadline := time.Now().Add(20 * time.Second); len(f.llm.ChatRequests()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the turn never asked the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/cancel", nil, nil, http.StatusAccepted)
	f.waitIdle(s.ID)
	if got, _ := f.app.Store.GetSession(context.Background(), s.ID); got.Model != "fake/fake-model" {
		t.Errorf("after the turn the model is %s, want the one chosen during it", got.Model)
	}
	reqs := f.llm.ChatRequests()
	if reqs[0].Chat.Model != "other-model" {
		t.Errorf("the running turn used %s", reqs[0].Chat.Model)
	}
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "again"}, nil, http.StatusAccepted)
	f.waitIdle(s.ID)
	reqs = f.llm.ChatRequests()
	if got := reqs[len(reqs)-1].Chat.Model; got != "fake-model" {
		t.Errorf("the next turn used %s", got)
	}
}

func TestModelsList(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var ml protocol.ModelList
	f.mustAPI("GET", "/api/models", nil, &ml, http.StatusOK)
	if ml.Default != "fake/fake-model" {
		t.Errorf("default %q", ml.Default)
	}
	got := map[string]protocol.ModelInfo{}
	for _, m := range ml.Models {
		got[m.ID] = m
	}
	if m := got["fake/fake-model"]; !m.Ready || !m.Default || m.Provider != "fake" || m.Name != "fake-model" {
		t.Errorf("fake/fake-model %+v", m)
	}
	if m := got["fake/other-model"]; !m.Ready || m.Default {
		t.Errorf("fake/other-model %+v", m)
	}
	if m := got["keyed/k1"]; m.Ready || !strings.Contains(m.Problem, "key") {
		t.Errorf("keyed/k1 without a key: %+v", m)
	}
}

func TestSettingsNeverReturnASecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(`{"hooks":{"Stop":[]},"permissions":{"allow":["read_file"]}}`), 0o600)
	var st protocol.Settings
	f.mustAPI("GET", "/api/settings", nil, &st, http.StatusOK)
	if st.Permissions.DefaultMode != "" || len(st.Permissions.Allow) != 1 || st.DefaultModel != "fake/fake-model" || len(st.Modes) != 4 {
		t.Errorf("settings %+v", st)
	}
	const key = "sk-test-SECRET-0123456789abcdef"
	mode := "acceptEdits"
	allow := []string{"run_command(go test:*)"}
	deny := []string{"run_command(rm:*)"}
	upd := protocol.SettingsUpdate{
		Permissions:  &protocol.PermissionsUpdate{DefaultMode: &mode, Allow: &allow, Deny: &deny},
		APIKeys:      map[string]string{"keyed": key},
		DefaultModel: "keyed/k1",
	}
	resp, data := f.request("PUT", "/api/settings", upd, f.auth())
	if resp.StatusCode != 200 {
		t.Fatalf("PUT settings: %d %s", resp.StatusCode, data)
	}
	if strings.Contains(string(data), key) {
		t.Fatal("PUT settings returned the key")
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.Permissions.DefaultMode != "acceptEdits" || strings.Join(st.Permissions.Allow, ",") != allow[0] ||
		strings.Join(st.Permissions.Deny, ",") != deny[0] || st.DefaultModel != "keyed/k1" || st.ActiveProvider != "keyed" {
		t.Errorf("after PUT: %+v", st)
	}
	for _, p := range st.Providers {
		if p.Name == "keyed" && (!p.KeyConfigured || !p.Ready || p.KeySource == "") {
			t.Errorf("keyed after its key was set: %+v", p)
		}
	}
	resp, data = f.request("GET", "/api/settings", nil, f.auth())
	if strings.Contains(string(data), key) || resp.StatusCode != 200 {
		t.Fatal("GET settings returned the key")
	}
	// The key reached the secret chain, not the config or the settings.
	if got, _, err := f.app.Secrets.Get(context.Background(), "keyed"); err != nil || got != key {
		t.Errorf("secret chain has %q, %v", got, err)
	}
	for _, name := range []string{"config.json", "settings.json"} {
		data, _ := os.ReadFile(filepath.Join(f.home, name))
		if strings.Contains(string(data), key) {
			t.Errorf("%s holds the key", name)
		}
	}
	// Other keys of settings.json are kept.
	data, _ = os.ReadFile(filepath.Join(f.home, "settings.json"))
	if !strings.Contains(string(data), `"hooks"`) || !strings.Contains(string(data), "acceptEdits") {
		t.Errorf("settings.json %s", data)
	}
	if fi, _ := os.Stat(filepath.Join(f.home, "settings.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("settings.json mode %v", fi.Mode().Perm())
	}
	// The model is usable now, and an empty key deletes it.
	var ml protocol.ModelList
	f.mustAPI("GET", "/api/models", nil, &ml, http.StatusOK)
	if ml.Default != "keyed/k1" {
		t.Errorf("default after PUT %q", ml.Default)
	}
	f.mustAPI("PUT", "/api/settings", protocol.SettingsUpdate{APIKeys: map[string]string{"keyed": ""}}, &st, http.StatusOK)
	for _, p := range st.Providers {
		if p.Name == "keyed" && (p.KeyConfigured || p.Ready) {
			t.Errorf("keyed after its key was deleted: %+v", p)
		}
	}
	// Unset the mode.
	empty := ""
	f.mustAPI("PUT", "/api/settings", protocol.SettingsUpdate{Permissions: &protocol.PermissionsUpdate{DefaultMode: &empty}}, &st, http.StatusOK)
	if st.Permissions.DefaultMode != "" || len(st.Permissions.Allow) != 1 {
		t.Errorf("after unsetting the mode: %+v", st.Permissions)
	}
}

func TestSessionPermissionMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil,
		llmtest.Call("write_file", `{"path":"a.txt","content":"x"}`),
		llmtest.Text("written"),
	)
	s := f.newSession()
	var m protocol.SessionMode
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/mode", nil, &m, http.StatusOK)
	if m.Mode != "default" || len(m.Modes) != 4 {
		t.Errorf("mode %+v", m)
	}
	f.mustAPI("PUT", "/api/sessions/"+s.ID+"/mode", protocol.SessionMode{Mode: "acceptEdits"}, &m, http.StatusOK)
	f.mustAPI("GET", "/api/sessions/"+s.ID+"/mode", nil, &m, http.StatusOK)
	if m.Mode != "acceptEdits" {
		t.Errorf("after PUT: %+v", m)
	}
	// The write needs no approval now.
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "write"}, nil, http.StatusAccepted)
	if st := f.waitIdle(s.ID); st.Status != protocol.StatusIdle {
		t.Fatalf("status %s", st.Status)
	}
	if f.readWS("a.txt") != "x" {
		t.Error("the write did not run")
	}
	resp, data := f.request("PUT", "/api/sessions/"+s.ID+"/mode", protocol.SessionMode{Mode: "yolo"}, f.auth())
	checkError(t, "unknown mode", resp, data, 400, protocol.CodeBadRequest)
	resp, data = f.request("PUT", "/api/sessions/nope/mode", protocol.SessionMode{Mode: "plan"}, f.auth())
	checkError(t, "unknown session", resp, data, 404, protocol.CodeSessionNotFound)
}
