package memory

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	doclib "github.com/doclib/doclib/shared"
)

// wordIndex answers the documents filter's `search` (a case-insensitive substring
// of the title or of one content string) for one library without reading every
// document: it holds the library's vocabulary and, per word, the ordinals of the
// documents using it (their positions in the library's list order).
//
// A word is a maximal run of letters and digits of the lower-cased text. A needle
// made only of letters and digits occurs in a text exactly when it occurs inside
// one of the text's words, so the vocabulary alone answers it. A needle with other
// characters ("directory > people") is split into its words: the documents holding
// all of them are the candidates, and only those are read to confirm the match.
type wordIndex struct {
	words   []string // sorted
	offsets []uint32 // the postings of words[i] are post[offsets[i]:offsets[i+1]]
	post    []uint32 // ordinals, ascending per word
	docs    int
}

// buildWordIndex indexes docs, whose ordinals are their positions in the slice.
func buildWordIndex(docs []*document) *wordIndex {
	ids := map[string]uint32{}
	var lists [][]uint32
	var scratch []byte
	for ord, d := range docs {
		forEachWord(d.Document, &scratch, func(w []byte) {
			id, ok := ids[string(w)]
			if !ok {
				id = uint32(len(lists))
				ids[string(w)] = id
				lists = append(lists, nil)
			}
			if l := lists[id]; len(l) == 0 || l[len(l)-1] != uint32(ord) {
				lists[id] = append(l, uint32(ord))
			}
		})
	}
	idx := &wordIndex{words: make([]string, 0, len(ids)), offsets: make([]uint32, 1, len(ids)+1), docs: len(docs)}
	for w := range ids {
		idx.words = append(idx.words, w)
	}
	slices.Sort(idx.words)
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	idx.post = make([]uint32, 0, total)
	for _, w := range idx.words {
		idx.post = append(idx.post, lists[ids[w]]...)
		idx.offsets = append(idx.offsets, uint32(len(idx.post)))
	}
	return idx
}

// forEachWord calls f with each lower-cased word of the document's title and
// content; f must not keep the slice.
func forEachWord(d *doclib.Document, scratch *[]byte, f func([]byte)) {
	words(d.Title, scratch, f)
	for _, s := range doclib.ContentStrings(d.Content) {
		words(s, scratch, f)
	}
}

func words(s string, scratch *[]byte, f func([]byte)) {
	w := (*scratch)[:0]
	for _, r := range s {
		if isWordRune(r) {
			w = utf8.AppendRune(w, unicode.ToLower(r))
			continue
		}
		if len(w) > 0 {
			f(w)
			w = w[:0]
		}
	}
	if len(w) > 0 {
		f(w)
	}
	*scratch = w
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tooCommon bounds the postings one needle word may gather, as a multiple of the
// library's size: past it the word narrows little (think "e"), and reading the
// documents is cheaper than gathering.
const tooCommon = 4

// match returns the ordinals that may contain needle (already lower-cased) as a
// bitmap, and whether every one of them certainly does (no need to read them).
// A nil bitmap means the index cannot narrow the search: read every document.
func (x *wordIndex) match(needle string) (set bitmap, exact bool) {
	var toks []string
	start := -1
	for i, r := range needle {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			toks = append(toks, needle[start:i])
			start = -1
		}
	}
	if start >= 0 {
		toks = append(toks, needle[start:])
	}
	if len(toks) == 0 {
		return nil, false
	}
	first, _ := utf8.DecodeRuneInString(needle)
	last, _ := utf8.DecodeLastRuneInString(needle)
	openLeft, openRight := isWordRune(first), isWordRune(last)
	for i, tok := range toks {
		// Only the first word may be the end of a longer word, and only the last
		// may be the start of one; words in between stand whole.
		s := x.gather(tok, i == 0 && openLeft, i == len(toks)-1 && openRight)
		switch {
		case s == nil: // too common to help
		case set == nil:
			set = s
		default:
			set.and(s)
		}
	}
	exact = len(toks) == 1 && openLeft && openRight && set != nil
	return set, exact
}

// gather returns the documents holding a word that matches tok: containing it
// (both sides open), ending with it (left open), starting with it (right open) or
// equal to it. It returns nil when the word would gather too much.
func (x *wordIndex) gather(tok string, openLeft, openRight bool) bitmap {
	var lo, hi int // the range of words to test
	switch {
	case openLeft:
		lo, hi = 0, len(x.words)
	case openRight:
		lo = sort.SearchStrings(x.words, tok)
		hi = lo + sort.Search(len(x.words)-lo, func(i int) bool { return !strings.HasPrefix(x.words[lo+i], tok) })
	default:
		lo = sort.SearchStrings(x.words, tok)
		hi = lo
		if lo < len(x.words) && x.words[lo] == tok {
			hi = lo + 1
		}
	}
	var hits []int
	n := 0
	for i := lo; i < hi; i++ {
		w := x.words[i]
		ok := true
		switch {
		case openLeft && openRight:
			ok = strings.Contains(w, tok)
		case openLeft:
			ok = strings.HasSuffix(w, tok)
		}
		if ok {
			hits = append(hits, i)
			n += int(x.offsets[i+1] - x.offsets[i])
			if n > tooCommon*x.docs {
				return nil
			}
		}
	}
	set := newBitmap(x.docs)
	for _, i := range hits {
		for _, ord := range x.post[x.offsets[i]:x.offsets[i+1]] {
			set.add(ord)
		}
	}
	return set
}

// bitmap is a set of ordinals.
type bitmap []uint64

func newBitmap(n int) bitmap       { return make(bitmap, (n+63)/64) }
func (b bitmap) add(i uint32)      { b[i/64] |= 1 << (i % 64) }
func (b bitmap) has(i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitmap) and(o bitmap) {
	for i := range b {
		b[i] &= o[i]
	}
}

// each calls f with the members in ascending order until f returns false.
func (b bitmap) each(f func(uint32) bool) {
	for i, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			if !f(uint32(i*64 + t)) {
				return
			}
			w &= w - 1
		}
	}
}
