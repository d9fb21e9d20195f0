package localsearch_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// history is a random life of an index: a first batch of documents, then
// batches that add documents, change some (other words, labels, activity)
// and delete some, as an indexer's stream batches do.
type history struct {
	batches []batch
	final   []search.IndexDoc // the live documents after the last batch
}

type batch struct {
	docs    []search.IndexDoc
	deleted []string
}

func newHistory(rng *rand.Rand, docs []search.IndexDoc, batches int) history {
	docs = slices.Clone(docs)
	first := len(docs) * 6 / 10
	h := history{batches: []batch{{docs: slices.Clone(docs[:first])}}}
	live := map[string]search.IndexDoc{}
	for _, d := range docs[:first] {
		live[d.ID] = d
	}
	rest := docs[first:]
	for b := range batches {
		var bt batch
		// New documents.
		take := len(rest) / (batches - b)
		bt.docs = append(bt.docs, rest[:take]...)
		rest = rest[take:]
		ids := make([]string, 0, len(live))
		for id := range live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		// Changed documents: another document's words, tags and activity.
		for range 1 + rng.IntN(len(ids)/20+1) {
			d := live[ids[rng.IntN(len(ids))]]
			o := docs[rng.IntN(len(docs))]
			d.Title, d.Body, d.Labels = o.Title+" "+d.Title, o.Body, o.Labels
			d.Doc.Tags, d.Doc.RecordingCount, d.Doc.LastSeen = o.Doc.Tags, o.Doc.RecordingCount, o.Doc.LastSeen
			d.Vector = o.Vector
			bt.docs = append(bt.docs, d)
		}
		// Deleted documents, some of them unknown or changed in this batch.
		for range rng.IntN(len(ids)/30 + 2) {
			bt.deleted = append(bt.deleted, ids[rng.IntN(len(ids))])
		}
		bt.deleted = append(bt.deleted, fmt.Sprintf("doc_never_%d", b))
		for _, d := range bt.docs {
			live[d.ID] = d
		}
		for _, id := range bt.deleted {
			delete(live, id)
		}
		// The same document twice in one batch is not what an indexer writes:
		// keep the last of each.
		seen := map[string]bool{}
		var uniq []search.IndexDoc
		for i := len(bt.docs) - 1; i >= 0; i-- {
			if d := bt.docs[i]; !seen[d.ID] {
				seen[d.ID] = true
				uniq = append(uniq, d)
			}
		}
		// A batch deletes what it does not also write.
		bt.docs = uniq
		bt.deleted = slices.DeleteFunc(bt.deleted, func(id string) bool { return seen[id] })
		for _, d := range bt.docs {
			live[d.ID] = d
		}
		h.batches = append(h.batches, bt)
	}
	for _, d := range live {
		h.final = append(h.final, d)
	}
	return h
}

// segmentsOf builds one segment per batch of h.
func segmentsOf(t testing.TB, h history, e search.Embedder) *localsearch.Segments {
	t.Helper()
	s := localsearch.NewSegments(e)
	for _, b := range h.batches {
		x, err := localsearch.FromDocs(context.Background(), b.docs, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.With(x, b.deleted); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func sortedCandidates(t *testing.T, r search.Retriever, q *search.Query) []candidate {
	t.Helper()
	var out []candidate
	if err := r.Candidates(context.Background(), q, func(c search.Candidate) {
		out = append(out, candidate{c.Doc.ID, c.Evidence})
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// TestSegmentsAnswerAsOneIndex gives an index a random history of batches
// (documents added, changed and deleted) kept as one segment per batch, and
// checks that many queries (words, typos, meaning; a part of the libraries
// visible; without recordings; the most active, filtered) get the same
// candidates, evidence and responses as from one index of the live documents.
func TestSegmentsAnswerAsOneIndex(t *testing.T) {
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 1200}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &memoEmbedder{Embedder: h, m: map[string][]float32{}}
	docs := indexDocs(t, d, e)
	rng := rand.New(rand.NewPCG(5, 8))
	for round, batches := range []int{1, 4, 9} {
		hist := newHistory(rng, docs, batches)
		segs := segmentsOf(t, hist, e)
		one, err := localsearch.FromDocs(ctx, hist.final, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if segs.Len() != len(hist.final) || segs.Count() < 2 {
			t.Fatalf("round %d: %d live documents in %d segments; %d expected in more than one", round, segs.Len(), segs.Count(), len(hist.final))
		}
		compareRetrievers(t, d, e, one, segs, rng)
	}
}

// compareRetrievers checks that a and b answer the same to many queries.
func compareRetrievers(t *testing.T, d *doclib.DataSet, e search.Embedder, a, b search.Retriever, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	var all []string
	for _, l := range d.Libraries {
		all = append(all, l.ID)
	}
	subsets := [][]string{all, {"lib_it"}, {"lib_finance", "lib_sales"}, {"lib_sales", "lib_northwind", "lib_solo"}}
	texts := []string{"", "reset password", "how do I get paid back for a trip", "new starter laptop",
		"security review of access keys", "customer refund", "quarterly close", "onboarding checklist"}
	var filters []search.Filter
	for range 25 {
		doc := d.Documents[rng.IntN(len(d.Documents))]
		words := strings.Fields(strings.ToLower(doc.Title))
		pick := words[rng.IntN(len(words)):]
		pick = pick[:min(len(pick), 1+rng.IntN(3))]
		q := strings.Join(pick, " ")
		texts = append(texts, q, typo(rng, q))
		f := search.Filter{Category: doc.Category}
		if len(doc.Tags) > 0 {
			f = search.Filter{Tag: doc.Tags[0]}
		}
		filters = append(filters, f)
	}
	rules := search.DefaultRules(e.ID())
	sa := &search.Searcher{Backend: search.Local{Retriever: a}, Embedder: search.Cached(e, 0), Rules: rules}
	sb := &search.Searcher{Backend: search.Local{Retriever: b}, Embedder: search.Cached(e, 0), Rules: rules}
	compared, nonEmpty := 0, 0
	for i, text := range texts {
		vec := queryVector(t, e, text)
		for j, libs := range subsets {
			noRec := (i+j)%3 == 0
			q := &search.Query{Text: text, Vector: vec, Libraries: libs, Rules: &rules, NoRecordings: noRec, Limit: 20}
			ca, cb := sortedCandidates(t, a, q), sortedCandidates(t, b, q)
			if !reflect.DeepEqual(ca, cb) {
				for k := range min(len(ca), len(cb)) {
					if ca[k] != cb[k] {
						t.Errorf("first difference: %+v and %+v", ca[k], cb[k])
						break
					}
				}
				t.Fatalf("%q in %v (no recordings %v): %d candidates from one index, %d from segments, or other evidence", text, libs, noRec, len(ca), len(cb))
			}
			if len(ca) > 0 {
				nonEmpty++
			}
			filter := search.Filter{}
			if i > 0 && (i+j)%2 == 0 {
				filter = filters[(i+j)%len(filters)]
			}
			ma, ta, err := a.MostActive(ctx, q, filter, 3, 15)
			if err != nil {
				t.Fatal(err)
			}
			mb, tb, err := b.MostActive(ctx, q, filter, 3, 15)
			if err != nil {
				t.Fatal(err)
			}
			if ta != tb || len(ma) != len(mb) {
				t.Fatalf("most active in %v, %+v: %d (page %d) and %d (page %d)", libs, filter, ta, len(ma), tb, len(mb))
			}
			for k := range ma {
				if ma[k].Doc.ID != mb[k].Doc.ID || ma[k].Evidence != mb[k].Evidence {
					t.Fatalf("most active in %v, %+v, #%d: %s %+v and %s %+v", libs, filter, k, ma[k].Doc.ID, ma[k].Evidence, mb[k].Doc.ID, mb[k].Evidence)
				}
			}
			req := search.Request{Text: text, Libraries: libs, Filter: filter, Limit: 10, NoRecordings: noRec}
			ra, err := sa.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := sb.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ra, rb) {
				t.Fatalf("%+v: one index answers %+v, segments %+v", req, ra, rb)
			}
			compared++
		}
	}
	if nonEmpty < compared/2 {
		t.Fatalf("only %d of %d queries had candidates: the comparison says little", nonEmpty, compared)
	}
	t.Logf("%d queries compared, %d with candidates", compared, nonEmpty)
}

// TestMergedSegmentsAnswerAsOneIndex merges random runs of a history's
// segments, as a merge policy would (the oldest ones, the newest ones, a run
// in the middle, all), and checks that each result still answers as one index
// of the live documents, and that a merge of every segment deletes nothing.
func TestMergedSegmentsAnswerAsOneIndex(t *testing.T) {
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 900}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &memoEmbedder{Embedder: h, m: map[string][]float32{}}
	docs := indexDocs(t, d, e)
	rng := rand.New(rand.NewPCG(9, 4))
	hist := newHistory(rng, docs, 7)
	one, err := localsearch.FromDocs(ctx, hist.final, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range [][2]int{{0, 8}, {0, 3}, {5, 8}, {2, 6}, {3, 4}, {1, 7}} {
		segs := segmentsOf(t, hist, e)
		x, deleted, err := segs.Merge(ctx, run[0], run[1])
		if err != nil {
			t.Fatal(err)
		}
		if run[0] == 0 && len(deleted) > 0 {
			t.Fatalf("a merge from the oldest segment deletes %d documents", len(deleted))
		}
		merged, err := segs.Replace(run[0], run[1], x, deleted)
		if err != nil {
			t.Fatal(err)
		}
		if merged.Len() != len(hist.final) || merged.Count() != 8-(run[1]-run[0])+1 {
			t.Fatalf("merge %v: %d live documents in %d segments", run, merged.Len(), merged.Count())
		}
		compareRetrievers(t, d, e, one, merged, rng)
		// And as a follower reads a manifest: the same segments added in order.
		again := localsearch.NewSegments(e)
		for i, b := range hist.batches {
			switch {
			case i == run[0]:
				if again, err = again.With(x, deleted); err != nil {
					t.Fatal(err)
				}
				continue
			case i > run[0] && i < run[1]:
				continue
			}
			bx, err := localsearch.FromDocs(ctx, b.docs, e, localsearch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if again, err = again.With(bx, b.deleted); err != nil {
				t.Fatal(err)
			}
		}
		compareRetrievers(t, d, e, one, again, rng)
	}
}
