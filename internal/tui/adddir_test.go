package tui

import (
	"errors"
	"strings"
	"testing"
)

type dirsBackend struct {
	*fakeBackend
	dirs []string
}

func (d *dirsBackend) AddDir(dir string) (string, error) {
	if dir == "missing" {
		return "", errors.New("directory /work/missing does not exist")
	}
	d.dirs = append(d.dirs, "/work/"+dir)
	return "/work/" + dir, nil
}
func (d *dirsBackend) AddedDirs() []string { return d.dirs }

func TestAddDir(t *testing.T) {
	h := newHarness(t, 100, 24)
	db := &dirsBackend{fakeBackend: h.b}
	h.m.backend = db
	h.typeLine("/add-dir")
	h.typeLine("/add-dir ../shared lib")
	h.typeLine("/add-dir missing")
	h.typeLine("/add-dir")
	s := h.screen()
	for _, want := range []string{"No directories added", "Added /work/../shared lib: the tools may use it", "does not exist", "Added directories\n  /work/../shared lib"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
}
