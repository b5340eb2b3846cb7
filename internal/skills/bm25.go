package skills

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Ranking skills against a task. BM25 (Robertson and Zaragoza's
// Okapi BM25, k1 = 1.2, b = 0.75) over each skill's name and description
// is the standard lexical ranking: it needs no model, costs microseconds,
// and rewards the rare words a description shares with the task ("pdf",
// "migration") over the common ones ("file", "code"). The name counts
// twice: a skill named after the task is the likeliest fit.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// stopWords are words too common in task descriptions and skill
// descriptions to tell skills apart. It is never changed.
var stopWords = wordSet(`a an and are as at be but by can do does for from has have how i if in
	into is it its me my of on or our please should so that the their them then there these this to
	us use used uses using was we what when where which while who why will with you your skill skills`)

func wordSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// tokens splits text into search terms: lower-case words of letters and
// digits (a plural "s" dropped), and for Chinese, Japanese and Korean text,
// which has no spaces, each character and each pair of neighbouring
// characters.
func tokens(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			w := stem(string(word))
			if !stopWords[w] && len(w) > 1 {
				out = append(out, w)
			}
			word = word[:0]
		}
	}
	flushCJK := func() {
		for i, r := range cjk {
			out = append(out, string(r))
			if i+1 < len(cjk) {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

func isCJK(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// stem drops an English plural ending: "tests" → "test", "queries" →
// "query". Anything more is not worth its mistakes here.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// bm25 is an index of documents for BM25 scoring.
type bm25 struct {
	docs  []map[string]int // term → count, per document
	lens  []int
	avg   float64
	df    map[string]int // term → documents holding it
	total int
}

func newBM25(texts []string) *bm25 {
	ix := &bm25{docs: make([]map[string]int, len(texts)), lens: make([]int, len(texts)), df: make(map[string]int)}
	sum := 0
	for i, t := range texts {
		tf := make(map[string]int)
		toks := tokens(t)
		for _, w := range toks {
			tf[w]++
		}
		for w := range tf {
			ix.df[w]++
		}
		ix.docs[i], ix.lens[i] = tf, len(toks)
		sum += len(toks)
	}
	ix.total = len(texts)
	if len(texts) > 0 {
		ix.avg = float64(sum) / float64(len(texts))
	}
	return ix
}

// scores returns each document's BM25 score for query.
func (ix *bm25) scores(query string) []float64 {
	out := make([]float64, ix.total)
	seen := make(map[string]bool)
	for _, q := range tokens(query) {
		if seen[q] {
			continue
		}
		seen[q] = true
		df := ix.df[q]
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(ix.total)-float64(df)+0.5)/(float64(df)+0.5))
		for i, tf := range ix.docs {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			norm := 1 - bm25B + bm25B*float64(ix.lens[i])/math.Max(ix.avg, 1)
			out[i] += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
		}
	}
	return out
}

// rank returns the indexes of the documents, best score first; ties keep
// the documents' order.
func (ix *bm25) rank(query string) ([]int, []float64) {
	sc := ix.scores(query)
	idx := make([]int, len(sc))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sc[idx[a]] > sc[idx[b]] })
	return idx, sc
}
