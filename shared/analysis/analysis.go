// Package analysis turns text into the terms that search matches on: words
// (runs of letters and digits), folded to lower case without diacritics, English
// stop words set apart, and stemmed with the Snowball English stemmer. The
// embedded search engine and the offline embedder both use it, so that a word
// means the same to the word match and to the meaning match.
package analysis

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Token is one word of a text.
type Token struct {
	// Word is the folded, lower-cased word as written ("passwords").
	Word string
	// Term is its stem ("password"), the unit of matching.
	Term string
	// Stop is true for English stop words ("the", "how", "it").
	Stop bool
}

// Analyzer analyses text. It caches stems, so one Analyzer should serve a whole
// index build; it is safe for concurrent use.
type Analyzer struct {
	mu    sync.RWMutex
	stems map[string]string
}

// New returns an Analyzer with an empty stem cache.
func New() *Analyzer { return &Analyzer{stems: map[string]string{}} }

// maxStemCache bounds the cache: past it, stems are computed without caching
// (queries then cost a few microseconds more, memory stays flat).
const maxStemCache = 1 << 20

// Tokens returns the words of s in order, with their terms.
func (a *Analyzer) Tokens(s string) []Token {
	var out []Token
	a.Each(s, func(t Token) { out = append(out, t) })
	return out
}

// Each calls f with each word of s in order.
func (a *Analyzer) Each(s string, f func(Token)) {
	s = Fold(s)
	start := -1
	emit := func(end int) {
		w := s[start:end]
		stop := english.IsStopWord(w)
		f(Token{Word: w, Term: a.stem(w, stop), Stop: stop})
	}
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			emit(i)
			start = -1
		}
	}
	if start >= 0 {
		emit(len(s))
	}
}

// Terms returns the terms of a query: the stems of its words without stop words,
// or, when the query is nothing but stop words ("IT", "how to"), the stems of all
// of them, so that such a query still searches for something.
func (a *Analyzer) Terms(s string) []string {
	toks := a.Tokens(s)
	var out []string
	for _, t := range toks {
		if !t.Stop {
			out = append(out, t.Term)
		}
	}
	if len(out) == 0 {
		for _, t := range toks {
			out = append(out, t.Term)
		}
	}
	return out
}

// DistinctTerms is Terms with each term once, in the order first met: what the
// search engines match on, so that a query repeating a word does not count it
// twice. Both engines (the embedded one and OpenSearch) take it from here, so
// that they agree on a query's terms.
func (a *Analyzer) DistinctTerms(s string) []string {
	terms := a.Terms(s)
	out := terms[:0:0]
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (a *Analyzer) stem(w string, stop bool) string {
	if stop {
		return w // stop words are matched as written
	}
	a.mu.RLock()
	s, ok := a.stems[w]
	a.mu.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, false)
	a.mu.Lock()
	if len(a.stems) < maxStemCache {
		a.stems[strings.Clone(w)] = s
	}
	a.mu.Unlock()
	return s
}

// foldChain decomposes characters, drops the combining marks and recomposes:
// "Café" becomes "Cafe", "Ångström" "Angstrom".
var foldPool = sync.Pool{New: func() any {
	return transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}}

// Fold returns s in lower case without diacritics. ASCII text takes a fast path.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	t := foldPool.Get().(transform.Transformer)
	defer foldPool.Put(t)
	t.Reset()
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.ToLower(out)
}
