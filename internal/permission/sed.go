package permission

import "strings"

// sedReadOnly judges sed: read-only without -i/--in-place, without -f (an
// unseen script) and with scripts that neither write files (w, W, s///w)
// nor run commands (e, s///e).
func sedReadOnly(args []word) (bool, string) {
	var scripts []string
	explicit := false
	i := 0
	for i < len(args) {
		a := args[i].s
		i++
		if a == "--" {
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			if !explicit {
				scripts = append(scripts, a)
				explicit = true // the first operand is the script
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			switch {
			case strings.HasPrefix(name, "in-place"):
				return false, "sed --in-place edits files"
			case name == "file":
				return false, "sed --file runs a script that is not shown"
			case name == "expression":
				if !hasVal && i < len(args) {
					val = args[i].s
					i++
				}
				scripts, explicit = append(scripts, val), true
			case name == "line-length" && !hasVal:
				i++
			}
			continue
		}
		cluster := a[1:]
		for j := 0; j < len(cluster); j++ {
			switch cluster[j] {
			case 'i':
				return false, "sed -i edits files in place"
			case 'f':
				return false, "sed -f runs a script that is not shown"
			case 'e', 'l':
				val := cluster[j+1:]
				if val == "" && i < len(args) {
					val = args[i].s
					i++
				}
				if cluster[j] == 'e' {
					scripts, explicit = append(scripts, val), true
				}
				j = len(cluster)
			case 'n', 'E', 'r', 's', 'u', 'z', 'b':
			default:
				return false, "sed option -" + string(cluster[j]) + " is not known to be safe"
			}
		}
	}
	for _, s := range scripts {
		if ok, why := sedScriptSafe(s); !ok {
			return false, why
		}
	}
	return true, "read-only command"
}

// sedScriptSafe parses a sed script far enough to find the commands that
// write files or run programs. Anything it cannot follow is unsafe.
func sedScriptSafe(s string) (bool, string) {
	p := sedParser{s: s}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return true, ""
		}
		if !p.address() {
			return false, "sed script address cannot be parsed"
		}
		p.skip(" \t")
		if p.peek() == ',' {
			p.i++
			p.skip(" \t")
			if !p.address() {
				return false, "sed script address cannot be parsed"
			}
		}
		p.skip(" \t")
		for p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if p.eof() {
			return false, "sed script ends after an address"
		}
		cmd := p.s[p.i]
		p.i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			p.skip(" \t")
			p.skip("0123456789")
		case ':', 'b', 't', 'T', 'v':
			p.toEnd(true)
		case 'a', 'i', 'c', 'r', 'R', '#':
			p.toEnd(false)
		case 'w', 'W':
			return false, "sed " + string(cmd) + " writes a file"
		case 'e':
			return false, "sed e runs a command"
		case 's':
			if !p.delimited(2) {
				return false, "sed s command cannot be parsed"
			}
			for !p.eof() && strings.IndexByte("gpiImM0123456789", p.s[p.i]) >= 0 {
				p.i++
			}
			if !p.eof() && (p.s[p.i] == 'e' || p.s[p.i] == 'w') {
				return false, "sed s///" + string(p.s[p.i]) + " writes a file or runs a command"
			}
		case 'y':
			if !p.delimited(2) {
				return false, "sed y command cannot be parsed"
			}
		default:
			return false, "sed command " + string(cmd) + " is not known to be safe"
		}
	}
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// toEnd skips to the end of the line (or, with semi, a ';'), following
// backslash-newline continuations.
func (p *sedParser) toEnd(semi bool) {
	for !p.eof() {
		c := p.s[p.i]
		if c == '\\' {
			p.i += 2
			continue
		}
		if c == '\n' || semi && (c == ';' || c == '}') {
			return
		}
		p.i++
	}
}

// address skips one address: a line number (with ~step), $, /regex/,
// \cregexc or +N, with I and M flags after a regex.
func (p *sedParser) address() bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9', c == '+', c == '~':
		p.i++
		p.skip("0123456789")
		if p.peek() == '~' {
			p.i++
			p.skip("0123456789")
		}
	case c == '$':
		p.i++
	case c == '/':
		p.i++
		if !p.until('/') {
			return false
		}
		p.skip("IM")
	case c == '\\':
		p.i++
		if p.eof() {
			return false
		}
		d := p.s[p.i]
		p.i++
		if !p.until(d) {
			return false
		}
		p.skip("IM")
	}
	return true
}

// until skips past the next unescaped d.
func (p *sedParser) until(d byte) bool {
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		if c == '\\' {
			p.i++
			continue
		}
		if c == d {
			return true
		}
		if c == '\n' {
			return false
		}
	}
	return false
}

// delimited skips a delimiter and n delimited fields (s/a/b/, y/a/b/).
func (p *sedParser) delimited(n int) bool {
	if p.eof() {
		return false
	}
	d := p.s[p.i]
	if d == '\\' || d == '\n' {
		return false
	}
	p.i++
	for range n {
		if !p.until(d) {
			return false
		}
	}
	return true
}
