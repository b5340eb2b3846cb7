package mcp

import (
	"testing"
)

func TestClientServer(t *testing.T) {
	t.Parallel()
	bad := []struct {
		name, typ, command, url string
	}{
		{"has space", "", "x", ""},
		{"", "", "x", ""},
		{"s", "", "", ""},
		{"s", "http", "", ""},
		{"s", "ftp", "", "ftp://h/x"},
		{"s", "http", "", "https://user:pw@h/mcp"},
	}
	for _, b := range bad {
		if _, err := ClientServer(b.name, b.typ, b.command, nil, nil, b.url, nil); err == nil {
			t.Errorf("%+v: accepted", b)
		}
	}
	s, err := ClientServer("ed", "", "run", []string{"${HOME}"}, map[string]string{"K": "${OPENAI_API_KEY}"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourceClient || s.Transport != TransportStdio {
		t.Errorf("%+v", s)
	}
	// The editor's values are used as given: no variable of mx-claw's
	// environment is read into them.
	if e := s.literal(); e.Args[0] != "${HOME}" || e.Env["K"] != "${OPENAI_API_KEY}" {
		t.Errorf("a client's entry was expanded: %+v", e)
	}
	h, err := ClientServer("web", "http", "", nil, nil, "https://example.com/mcp", map[string]string{"Authorization": "Bearer t"})
	if err != nil || h.Transport != TransportHTTP {
		t.Errorf("http server: %+v %v", h, err)
	}
}

func TestConfigWithClient(t *testing.T) {
	t.Parallel()
	user := &Server{Name: "ed", Source: SourceUser, Transport: TransportStdio, Command: "mine"}
	other := &Server{Name: "other", Source: SourceUser, Transport: TransportStdio, Command: "o"}
	c := &Config{Servers: []*Server{user, other}}
	client, _ := ClientServer("ed", "", "theirs", nil, nil, "", nil)
	got := c.WithClient([]*Server{client})
	if s := got.Find("ed"); s != client {
		t.Errorf("ed is %+v, want the editor's", s)
	}
	if got.Find("other") != other || len(got.Held) != 1 || got.Held[0].Server != user || !got.Held[0].Shadowed {
		t.Errorf("servers %v, held %+v", got.Servers, got.Held)
	}
	if len(c.Servers) != 2 || len(c.Held) != 0 {
		t.Errorf("WithClient changed the config it was given")
	}
	if c.WithClient(nil) != c {
		t.Errorf("no client servers: a new config")
	}
}
