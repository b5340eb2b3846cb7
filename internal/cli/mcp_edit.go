package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mx-claw/mx-claw/internal/mcp"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Editing the files that hold mcpServers: the user's settings.json and a
// project's .mcp.json. The files are rewritten with their top-level keys
// (and the servers) in the order they had, each value re-indented; nothing
// else of them changes.

// orderedObject is a JSON object that keeps the order of its keys.
type orderedObject struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads a JSON object; empty text is an empty object.
func parseObject(data []byte) (*orderedObject, error) {
	o := &orderedObject{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return o, nil
}

func (o *orderedObject) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *orderedObject) remove(key string) bool {
	if _, ok := o.vals[key]; !ok {
		return false
	}
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
	return true
}

// marshal writes the object indented by two spaces.
func (o *orderedObject) marshal() []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range o.keys {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		b.WriteString("\n  ")
		b.Write(kb)
		b.WriteString(": ")
		var v bytes.Buffer
		if json.Indent(&v, o.vals[k], "  ", "  ") != nil {
			v.Reset()
			v.Write(o.vals[k])
		}
		b.Write(v.Bytes())
	}
	if len(o.keys) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// serverFile is a file holding mcpServers.
type serverFile struct {
	path    string
	project bool
	top     *orderedObject
	servers *orderedObject
}

// openUserServers reads the user's settings.json (which must be valid
// settings) for editing its mcpServers.
func openUserServers(home string) (*serverFile, error) {
	path := permission.UserSettingsPath(home)
	if _, err := permission.LoadSettings(path); err != nil {
		return nil, fmt.Errorf("%w; fix the file first", err)
	}
	data, err := safefile.ReadFile(path, safefile.DefaultMax)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return newServerFile(path, false, data)
}

// openProjectServers reads a workspace's .mcp.json for editing; a
// symbolic link there is refused.
func openProjectServers(workspace string) (*serverFile, error) {
	path := filepath.Join(workspace, mcp.ProjectFile)
	data, err := safefile.ReadInTree(workspace, mcp.ProjectFile, safefile.DefaultMax)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return newServerFile(path, true, data)
}

func newServerFile(path string, project bool, data []byte) (*serverFile, error) {
	top, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw := top.vals["mcpServers"]
	if string(bytes.TrimSpace(raw)) == "null" {
		raw = nil
	}
	servers, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: mcpServers: %w", path, err)
	}
	return &serverFile{path: path, project: project, top: top, servers: servers}, nil
}

// save writes the file back atomically: mode 0600 for the user's
// settings, 0644 for a project's file.
func (f *serverFile) save() error {
	f.top.set("mcpServers", f.servers.marshal())
	mode := os.FileMode(0o600)
	if f.project {
		mode = 0o644
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".mcp-edit-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(f.top.marshal())
	if err := errors.Join(werr, tmp.Chmod(mode), tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
