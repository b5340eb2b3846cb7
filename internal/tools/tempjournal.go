package tools

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// TempJournal records the temporary files a process's atomic writes create
// in workspaces, one list file per process (Dir/<pid>.list), so that a
// later start can remove the ones a killed process left behind
// (CleanTempJournals). A write adds its temporary file to the list before
// creating it; the list is removed when the process closes the journal.
// It is safe for concurrent use; a nil *TempJournal records nothing.
type TempJournal struct {
	dir string
	mu  sync.Mutex
	f   *os.File
}

// NewTempJournal returns a journal keeping its lists in dir, which is
// created on the first record.
func NewTempJournal(dir string) *TempJournal { return &TempJournal{dir: dir} }

// listName is the list of process pid.
func listName(pid int) string { return strconv.Itoa(pid) + ".list" }

// record adds path to the process's list. It is best effort: a journal
// that cannot be written does not stop the write it records.
func (j *TempJournal) record(path string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		if err := os.MkdirAll(j.dir, 0o700); err != nil {
			return
		}
		f, err := os.OpenFile(filepath.Join(j.dir, listName(os.Getpid())), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		j.f = f
	}
	_, _ = j.f.WriteString(path + "\n")
}

// Close removes the process's list: its writes are over.
func (j *TempJournal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if rerr := os.Remove(filepath.Join(j.dir, listName(os.Getpid()))); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// tempName matches the names writeTemp gives its files.
var tempName = regexp.MustCompile(`^\..+\.tmp-[0-9a-z]+$`)

// CleanTempJournals removes the temporary files listed by processes that
// are gone (alive reports false for their pid) and that still exist, then
// their lists, and returns the files it removed. Only regular files whose
// name is one writeTemp gives are removed.
func CleanTempJournals(dir string, alive func(pid int) bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".list"))
		if err != nil || !strings.HasSuffix(e.Name(), ".list") || pid == os.Getpid() || alive(pid) {
			continue
		}
		list := filepath.Join(dir, e.Name())
		f, err := os.Open(list)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p := sc.Text()
			if !filepath.IsAbs(p) || !tempName.MatchString(filepath.Base(p)) {
				continue
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && os.Remove(p) == nil {
				removed = append(removed, p)
			}
		}
		f.Close()
		_ = os.Remove(list)
	}
	return removed
}
