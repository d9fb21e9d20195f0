package memory_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/demo"
)

// bruteForce is the definition of the documents filter's search: a case-insensitive
// substring of the title or of one content string, with the other filters, in
// list order (updatedAt desc, then id).
func bruteForce(d *doclib.DataSet, libraryID string, f doclib.DocumentFilter) []string {
	var docs []*doclib.Document
	needle := strings.ToLower(f.Search)
	for _, doc := range d.Documents {
		if doc.LibraryID != libraryID ||
			(f.Category != "" && doc.Category != f.Category) ||
			(f.Tag != "" && !slices.Contains(doc.Tags, f.Tag)) ||
			(f.Application != "" && !slices.Contains(doc.Applications, f.Application)) {
			continue
		}
		hit := strings.Contains(strings.ToLower(doc.Title), needle)
		for _, s := range doclib.ContentStrings(doc.Content) {
			hit = hit || strings.Contains(strings.ToLower(s), needle)
		}
		if hit {
			docs = append(docs, doc)
		}
	}
	slices.SortFunc(docs, func(a, b *doclib.Document) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	ids := make([]string, len(docs))
	for i, doc := range docs {
		ids[i] = doc.ID
	}
	return ids
}

func listAll(t testing.TB, s *memory.Store, libraryID string, f doclib.DocumentFilter) []string {
	t.Helper()
	docs, total, err := s.ListDocuments(context.Background(), &doclib.Library{ID: libraryID}, f, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(docs) {
		t.Fatalf("%+v: total %d but %d documents", f, total, len(docs))
	}
	ids := make([]string, len(docs))
	for i, doc := range docs {
		ids[i] = doc.ID
	}
	return ids
}

// TestSearchMatchesBruteForce checks the word index against the definition on the
// demo set, with needles cut from the documents' own text at random places (so
// parts of words, several words, punctuation), their upper-case forms, and
// needles chosen to take each path of the index.
func TestSearchMatchesBruteForce(t *testing.T) {
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := memory.New(d)
	rng := rand.New(rand.NewPCG(7, 7))
	needles := []string{
		"e", "a", "the", "password", "PASSWORD", "pass", "word", "ssw", // parts of words; "e" and "a" are too common to gather
		"reset a", "a user", " the ", "the user's", "> people", "-", " ", "'", ".", // several words, punctuation only
		"zzzz-no-such-text", "é", "okta admin", "okta,", "1", "2026", // no match, Unicode, digits
	}
	for range 400 {
		doc := d.Documents[rng.IntN(len(d.Documents))]
		texts := append([]string{doc.Title}, doclib.ContentStrings(doc.Content)...)
		text := texts[rng.IntN(len(texts))]
		if text == "" {
			continue
		}
		i := rng.IntN(len(text))
		j := min(len(text), i+1+rng.IntN(24))
		needle := strings.ToValidUTF8(text[i:j], "")
		if needle == "" {
			continue
		}
		if rng.IntN(4) == 0 {
			needle = strings.ToUpper(needle)
		}
		needles = append(needles, needle)
	}
	checked, nonEmpty := 0, 0
	for _, lib := range d.Libraries {
		for _, n := range needles {
			for _, f := range []doclib.DocumentFilter{{Search: n}, {Search: n, Tag: lib.Tags[0].Name}, {Search: n, Category: lib.Categories[0].Name}} {
				want := bruteForce(d, lib.ID, f)
				if got := listAll(t, s, lib.ID, f); !slices.Equal(got, want) {
					t.Fatalf("%s %+v:\n got %v\nwant %v", lib.ID, f, got, want)
				}
				checked++
				if len(want) > 0 {
					nonEmpty++
				}
			}
		}
	}
	if nonEmpty < checked/5 { // a needle cut from one library rarely occurs in the other six
		t.Errorf("only %d of %d searches found anything; the needles test too little", nonEmpty, checked)
	}
}

// FuzzSearch: whatever the needle, the index answers as the definition does.
func FuzzSearch(f *testing.F) {
	for _, n := range []string{"password", "reset a", "> people", "e", " ", "é", "Okta"} {
		f.Add(n)
	}
	d, err := demo.Load()
	if err != nil {
		f.Fatal(err)
	}
	s := memory.New(d)
	f.Fuzz(func(t *testing.T, needle string) {
		if needle == "" || len(needle) > 64 {
			t.Skip()
		}
		needle = strings.ToValidUTF8(needle, "")
		for _, lib := range []string{"lib_it", "lib_finance"} {
			fl := doclib.DocumentFilter{Search: needle}
			if got, want := listAll(t, s, lib, fl), bruteForce(d, lib, fl); !slices.Equal(got, want) {
				t.Fatalf("%s %q:\n got %v\nwant %v", lib, needle, got, want)
			}
		}
	})
}
