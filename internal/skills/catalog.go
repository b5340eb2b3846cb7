package skills

import (
	"strings"
	"sync"
)

// DefaultIndexSize is how many skills a session's index lists at most;
// beyond it the skill tool searches the rest.
const DefaultIndexSize = 30

// Catalog is the set of skills a session may load. It is safe for
// concurrent use.
type Catalog struct {
	skills []Skill // sorted by name
	byName map[string]int

	once sync.Once
	ix   *bm25
}

// NewCatalog returns a catalog of skills (which Discover returns sorted;
// the catalog keeps the order it is given).
func NewCatalog(skills []Skill) *Catalog {
	c := &Catalog{skills: skills, byName: make(map[string]int, len(skills))}
	for i, s := range skills {
		if _, dup := c.byName[s.Name]; !dup {
			c.byName[s.Name] = i
		}
	}
	return c
}

// Skills returns the catalog's skills. The slice must not be changed.
func (c *Catalog) Skills() []Skill { return c.skills }

// Len returns the number of skills.
func (c *Catalog) Len() int { return len(c.skills) }

// Lookup finds a skill by name: exactly, else ignoring case, else (for a
// plugin's skill) by the name after "plugin:" when only one skill has it.
func (c *Catalog) Lookup(name string) (Skill, bool) {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "/"))
	if i, ok := c.byName[name]; ok {
		return c.skills[i], true
	}
	found := -1
	for i, s := range c.skills {
		short := s.Name
		if _, after, ok := strings.Cut(s.Name, ":"); ok {
			short = after
		}
		if strings.EqualFold(s.Name, name) || strings.EqualFold(short, name) {
			if found >= 0 {
				return Skill{}, false
			}
			found = i
		}
	}
	if found < 0 {
		return Skill{}, false
	}
	return c.skills[found], true
}

func (c *Catalog) index() *bm25 {
	c.once.Do(func() {
		texts := make([]string, len(c.skills))
		for i, s := range c.skills {
			n := strings.NewReplacer("-", " ", "_", " ", ":", " ", ".", " ").Replace(s.Name)
			texts[i] = n + " " + n + " " + s.Description
		}
		c.ix = newBM25(texts)
	})
	return c.ix
}

// Search returns at most n skills matching query, best first; skills that
// share no word with it are left out.
func (c *Catalog) Search(query string, n int) []Skill {
	order, sc := c.index().rank(query)
	var out []Skill
	for _, i := range order {
		if sc[i] <= 0 || len(out) >= n {
			break
		}
		out = append(out, c.skills[i])
	}
	return out
}

// Select returns the skills an index of at most max entries lists for a
// session whose first message is task: all of them when they fit, else
// the max best ranked against task (ties by name). The result is sorted
// by name.
func (c *Catalog) Select(task string, max int) []Skill {
	if max <= 0 {
		max = DefaultIndexSize
	}
	if len(c.skills) <= max {
		return append([]Skill(nil), c.skills...)
	}
	order, _ := c.index().rank(task)
	picked := make([]bool, len(c.skills))
	for _, i := range order[:max] {
		picked[i] = true
	}
	out := make([]Skill, 0, max)
	for i, s := range c.skills {
		if picked[i] {
			out = append(out, s)
		}
	}
	return out
}
