package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// MaxSkills caps how many skills Discover returns: beyond it the index
// would be useless and every session would pay for reading them.
const MaxSkills = 1000

// Root is a folder of skill folders.
type Root struct {
	// Dir is the folder whose subfolders are skills.
	Dir string
	// Source is what the skills found here say they come from ("user",
	// "project", "plugin:NAME").
	Source string
	// Prefix is put before each skill's name ("NAME:" for a plugin).
	Prefix string
	// Base, if set, is a tree Dir lies in that the skills may not leave:
	// no symbolic link from Base down to a skill's files is followed
	// (Dir itself included). Empty for the user's own folders, where a
	// link is the user's choice.
	Base string
}

// Discover finds the skills of the roots, in order: a skill whose name an
// earlier one has is left out with a warning. A root that does not exist
// is skipped silently; a skill folder that cannot be read or whose
// SKILL.md is unusable is skipped with a warning. The result is sorted by
// name. cache, if not nil, keeps parsed SKILL.md files between calls.
func Discover(roots []Root, cache ...*Cache) ([]Skill, []string) {
	var c *Cache
	if len(cache) > 0 {
		c = cache[0]
	}
	var out []Skill
	var warnings []string
	seen := make(map[string]string) // name → where
	for _, root := range roots {
		found, warns := discoverRoot(root, c)
		warnings = append(warnings, warns...)
		for _, s := range found {
			if where, dup := seen[s.Name]; dup {
				warnings = append(warnings, fmt.Sprintf("skill %s in %s is left out: %s has one of that name", s.Name, s.Dir, where))
				continue
			}
			if len(out) >= MaxSkills {
				warnings = append(warnings, fmt.Sprintf("more than %d skills; the rest are left out", MaxSkills))
				sortSkills(out)
				return out, warnings
			}
			seen[s.Name] = s.Dir
			out = append(out, s)
		}
	}
	sortSkills(out)
	return out, warnings
}

func sortSkills(s []Skill) {
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
}

// discoverRoot reads the skills of one root, in folder order.
func discoverRoot(root Root, cache *Cache) ([]Skill, []string) {
	if root.Base != "" {
		if err := noLinks(root.Base, root.Dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, []string{fmt.Sprintf("skills in %s are not loaded: %v", root.Dir, err)}
		}
	}
	entries, err := os.ReadDir(root.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, []string{fmt.Sprintf("skills in %s are not loaded: %v", root.Dir, err)}
	}
	var out []Skill
	var warnings []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root.Dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0 && root.Base != "":
			warnings = append(warnings, fmt.Sprintf("skill folder %s is a symbolic link; not loaded", dir))
			continue
		case e.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
		case !e.IsDir():
			continue
		}
		s := Skill{Dir: dir, Source: root.Source, Base: root.Base}
		doc, err := cache.load(s)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md is not a skill
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skill %s is not loaded: %v", dir, err))
			continue
		}
		for _, w := range doc.Warnings {
			warnings = append(warnings, fmt.Sprintf("skill %s: %s", dir, w))
		}
		s.Name, s.Description, s.AllowedTools = root.Prefix+doc.Name, doc.Description, doc.AllowedTools
		out = append(out, s)
	}
	return out, warnings
}

// Load reads the skill's SKILL.md as it is now.
func (s Skill) Load() (Doc, error) { return s.load() }

func (s Skill) load() (Doc, error) {
	data, err := s.readFile(FileName, maxFileBytes)
	if err != nil {
		return Doc{}, err
	}
	return Parse(data, filepath.Base(s.Dir))
}

// readFile reads the file rel (slash-separated, relative) of the skill's
// folder. No symbolic link inside the folder is followed, nor, for a skill
// in a confined tree, any between the tree's root and the folder.
func (s Skill) readFile(rel string, max int64) ([]byte, error) {
	clean, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	if s.Base != "" {
		sub, err := filepath.Rel(s.Base, s.Dir)
		if err != nil || sub == ".." || strings.HasPrefix(sub, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("skill folder %s is outside %s", s.Dir, s.Base)
		}
		return safefile.ReadInTree(s.Base, filepath.Join(sub, clean), max)
	}
	return safefile.ReadInTree(s.Dir, clean, max)
}

// cleanRel checks a path relative to a skill's folder and returns it in
// the OS's form.
func cleanRel(rel string) (string, error) {
	if rel == "" || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("file %q: give a path inside the skill's folder", rel)
	}
	p := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) || p == "." {
		return "", fmt.Errorf("file %q is not inside the skill's folder", rel)
	}
	return p, nil
}

// noLinks checks that no component of dir below base is a symbolic link
// and that dir is a directory.
func noLinks(base, dir string) error {
	sub, err := filepath.Rel(base, dir)
	if err != nil || sub == ".." || strings.HasPrefix(sub, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside %s", dir, base)
	}
	p := base
	if sub != "." {
		for _, c := range strings.Split(sub, string(filepath.Separator)) {
			p = filepath.Join(p, c)
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symbolic link", p)
			}
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// File is one of a skill's other files.
type File struct {
	// Path is relative to the skill's folder, slash-separated.
	Path string
	Size int64
}

// Listing limits: a skill's folder may hold a whole project; the model
// needs to know what is there, not every file.
const (
	maxListed    = 100
	maxListDepth = 4
)

// Files lists the skill's other files (not SKILL.md, not hidden ones),
// sorted, at most 100 and at most four folders deep; more says whether
// some were left out. Symbolic links are not followed.
func (s Skill) Files() (files []File, more bool, err error) {
	if s.Base != "" {
		if err := noLinks(s.Base, s.Dir); err != nil {
			return nil, false, err
		}
	}
	root := s.Dir
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= maxListDepth-1 {
				more = true
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rel == FileName {
			return nil
		}
		if len(files) >= maxListed {
			more = true
			return filepath.SkipAll
		}
		var size int64
		if fi, err := d.Info(); err == nil {
			size = fi.Size()
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: size})
		return nil
	})
	return files, more, err
}

// Cache keeps parsed SKILL.md files by path, size and modification time,
// so a process starting many sessions does not parse every skill each
// time. It is safe for concurrent use; the zero value is ready.
type Cache struct {
	mu   sync.Mutex
	docs map[string]cachedDoc
}

type cachedDoc struct {
	size  int64
	mtime time.Time
	doc   Doc
}

// load returns the skill's parsed SKILL.md, from the cache when the file
// (not followed if it is a link) has the size and time it had. A nil
// cache always reads.
func (c *Cache) load(s Skill) (Doc, error) {
	if c == nil {
		return s.load()
	}
	path := filepath.Join(s.Dir, FileName)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return s.load() // the read says what is wrong
	}
	c.mu.Lock()
	d, ok := c.docs[path]
	c.mu.Unlock()
	if ok && d.size == fi.Size() && d.mtime.Equal(fi.ModTime()) {
		return d.doc, nil
	}
	doc, err := s.load()
	if err != nil {
		return doc, err
	}
	c.mu.Lock()
	if c.docs == nil {
		c.docs = make(map[string]cachedDoc)
	}
	c.docs[path] = cachedDoc{size: fi.Size(), mtime: fi.ModTime(), doc: doc}
	c.mu.Unlock()
	return doc, nil
}
