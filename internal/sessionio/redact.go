package sessionio

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Redacted is what a secret is replaced by in an export.
const Redacted = "[redacted]"

// secretPatterns match credentials by their shape: provider keys, tokens
// of well-known services, private keys, bearer tokens, and the value of
// an assignment to a variable whose name says it is secret.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}`),
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/=-]{16,}`),
}

// secretName is a name that says its value is secret.
const secretName = `(?i)([A-Za-z0-9_.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|credential|private[_-]?key)[A-Za-z0-9_]*)`

// quotedAssignment matches name: "value" (JSON, YAML) and NAME="value";
// assignment matches NAME=value unquoted. The value is replaced.
var (
	quotedAssignment = regexp.MustCompile(secretName + `(["']?\s*[:=]\s*)("[^"\n]{4,}"|'[^'\n]{4,}')`)
	assignment       = regexp.MustCompile(secretName + `(\s*[:=]\s*)([^\s"'\\,;}]{6,})`)
)

// Redactor hides secrets in text: the exact values it is given (the
// configured API keys) and anything shaped like a credential.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor that also hides the given values (values
// shorter than 6 characters are not secrets and are ignored).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) >= 6 {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// String returns s with every secret replaced by Redacted.
func (r *Redactor) String(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	for _, p := range secretPatterns {
		s = p.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(strings.ToLower(m), "bearer") || strings.HasPrefix(strings.ToLower(m), "token") {
				return m[:strings.IndexAny(m, " \t")] + " " + Redacted
			}
			return Redacted
		})
	}
	s = quotedAssignment.ReplaceAllStringFunc(s, func(m string) string {
		sub := quotedAssignment.FindStringSubmatch(m)
		q := sub[3][:1]
		return sub[1] + sub[2] + q + Redacted + q
	})
	return assignment.ReplaceAllString(s, "${1}${2}"+Redacted)
}

// Value returns v encoded as JSON with every string in it (at any depth,
// keys aside) redacted.
func (r *Redactor) Value(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(r.walk(tree))
}

func (r *Redactor) walk(v any) any {
	switch t := v.(type) {
	case string:
		return r.String(t)
	case []any:
		for i := range t {
			t[i] = r.walk(t[i])
		}
	case map[string]any:
		for k, x := range t {
			t[k] = r.walk(x)
		}
	}
	return v
}
