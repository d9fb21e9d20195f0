package localsearch_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// indexDocs makes the index documents of a data set the way the indexer does,
// independently of Build: per document, its readable recordings (those behind
// it that search.Readable allows on its workspace's plan), and the vectors of
// search.DocumentText and search.RecordingText, checked and normalised by
// search.CheckVectors. A recording behind several documents is embedded once
// per document, as the indexer does. The result is shuffled: a snapshot's
// order must not matter.
func indexDocs(t testing.TB, d *doclib.DataSet, e search.Embedder) []search.IndexDoc {
	t.Helper()
	plans := map[string]doclib.Plan{}
	for _, w := range d.Workspaces {
		plans[w.ID] = w.Plan
	}
	behind := map[string][]*doclib.Recording{}
	for _, r := range d.Recordings {
		for _, id := range r.DocumentIDs {
			behind[id] = append(behind[id], r)
		}
	}
	out := make([]search.IndexDoc, 0, len(d.Documents))
	for _, doc := range d.Documents {
		var recs []*doclib.Recording
		if plan, ok := plans[doc.WorkspaceID]; ok {
			for _, r := range behind[doc.ID] {
				if search.Readable(r, plan) {
					recs = append(recs, r)
				}
			}
		}
		texts := []string{search.DocumentText(doc)}
		for _, r := range recs {
			texts = append(texts, search.RecordingText(r))
		}
		vs, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if err := search.CheckVectors(vs, len(texts), e.Dimensions()); err != nil {
			t.Fatal(err)
		}
		out = append(out, search.NewIndexDoc(doc, vs[0], recs, vs[1:]))
	}
	rng := rand.New(rand.NewPCG(3, 5))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// memoEmbedder gives a text the vector it gave it the first time. The offline
// embedder's vectors vary in their last bits from call to call (it sums its
// features in a map's order), and the comparison of the two indexes is exact.
type memoEmbedder struct {
	search.Embedder
	mu sync.Mutex
	m  map[string][]float32
}

func (m *memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, text := range texts {
		v, ok := m.m[text]
		if !ok {
			vs, err := m.Embedder.Embed(ctx, []string{text})
			if err != nil {
				return nil, err
			}
			v = vs[0]
			m.m[text] = v
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

type candidate struct {
	ID string
	search.Evidence
}

func candidates(t *testing.T, x *localsearch.Index, q *search.Query) []candidate {
	t.Helper()
	var out []candidate
	if err := x.Candidates(context.Background(), q, func(c search.Candidate) {
		out = append(out, candidate{c.Doc.ID, c.Evidence})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFromDocsAnswersAsBuild builds the demo data with Build, and with FromDocs
// from the index documents the indexer would write for it, and checks that
// many queries (words, typos, meaning; with filters, a part of the libraries
// visible, without recordings; the most active) get the same candidates,
// evidence and responses from both.
func TestFromDocsAnswersAsBuild(t *testing.T) {
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 1500}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &memoEmbedder{Embedder: h, m: map[string][]float32{}}
	built, err := localsearch.Build(ctx, d, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := indexDocs(t, d, e)
	readable := 0
	for _, doc := range docs {
		readable += len(doc.Recordings)
	}
	from, err := localsearch.FromDocs(ctx, docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bs, fs := built.Stats(), from.Stats(); bs != fs {
		t.Fatalf("Build's index is %+v, FromDocs's %+v", bs, fs)
	}
	if st := built.Stats(); st.Documents != len(d.Documents) || st.Recordings == 0 || st.Recordings >= readable {
		t.Fatalf("stats %+v for %d documents and %d readable recording links: the test data do not share recordings across documents", st, len(d.Documents), readable)
	}
	if built.EmbedderID() != from.EmbedderID() {
		t.Fatalf("embedder %s and %s", built.EmbedderID(), from.EmbedderID())
	}

	var all []string
	for _, l := range d.Libraries {
		all = append(all, l.ID)
	}
	subsets := [][]string{all, {"lib_it"}, {"lib_finance", "lib_sales"}, {"lib_sales", "lib_northwind", "lib_solo"}}

	// Queries: words of titles, the same with typos, and phrases of meaning.
	rng := rand.New(rand.NewPCG(11, 17))
	texts := []string{"", "reset password", "how do I get paid back for a trip", "new starter laptop",
		"security review of access keys", "customer refund", "quarterly close", "onboarding checklist"}
	var filters []search.Filter
	for range 40 {
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
		if len(doc.Applications) > 0 && rng.IntN(2) == 0 {
			f = search.Filter{Application: doc.Applications[0], LibraryID: doc.LibraryID}
		}
		filters = append(filters, f)
	}

	rules := search.DefaultRules(e.ID())
	sb, sf := searcher(built, rules), searcher(from, rules)
	compared, nonEmpty := 0, 0
	for i, text := range texts {
		vec := queryVector(t, e, text)
		for j, libs := range subsets {
			for _, noRec := range []bool{false, true} {
				q := &search.Query{Text: text, Vector: vec, Libraries: libs, Rules: &rules, NoRecordings: noRec, Limit: 20}
				cb, cf := candidates(t, built, q), candidates(t, from, q)
				if !reflect.DeepEqual(cb, cf) {
					t.Fatalf("%q in %v (no recordings %v): Build's index gives %d candidates, FromDocs's %d, or other evidence", text, libs, noRec, len(cb), len(cf))
				}
				if len(cb) > 0 {
					nonEmpty++
				}
				filter := search.Filter{}
				if i > 0 && (i+j)%2 == 0 {
					filter = filters[(i+j)%len(filters)]
				}
				mb, tb, err := built.MostActive(ctx, q, filter, 3, 15)
				if err != nil {
					t.Fatal(err)
				}
				mf, tf, err := from.MostActive(ctx, q, filter, 3, 15)
				if err != nil {
					t.Fatal(err)
				}
				if tb != tf || len(mb) != len(mf) {
					t.Fatalf("most active in %v, %+v: %d (page %d) and %d (page %d)", libs, filter, tb, len(mb), tf, len(mf))
				}
				for k := range mb {
					if mb[k].Doc.ID != mf[k].Doc.ID || mb[k].Evidence != mf[k].Evidence {
						t.Fatalf("most active in %v, %+v, #%d: %s %+v and %s %+v", libs, filter, k, mb[k].Doc.ID, mb[k].Evidence, mf[k].Doc.ID, mf[k].Evidence)
					}
				}
				req := search.Request{Text: text, Libraries: libs, Filter: filter, Limit: 10, NoRecordings: noRec}
				rb, err := sb.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				rf, err := sf.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(rb, rf) {
					t.Fatalf("%+v: Build's index answers %+v, FromDocs's %+v", req, rb, rf)
				}
				compared++
			}
		}
	}
	if nonEmpty < compared/2 {
		t.Fatalf("only %d of %d queries had candidates: the comparison says little", nonEmpty, compared)
	}
	t.Logf("%d queries compared, %d with candidates", compared, nonEmpty)
}

// typo changes one letter of the longest word of q (of 5 letters or more).
func typo(rng *rand.Rand, q string) string {
	words := strings.Fields(q)
	longest := 0
	for i, w := range words {
		if len(w) > len(words[longest]) {
			longest = i
		}
	}
	w := []byte(words[longest])
	if len(w) < 5 {
		return q + "s"
	}
	w[1+rng.IntN(len(w)-2)] = byte('a' + rng.IntN(26))
	words[longest] = string(w)
	return strings.Join(words, " ")
}

// smallDocs are three documents of two libraries, a recording behind two of
// them, with vectors for an embedder of 16 dimensions.
func smallDocs() []search.IndexDoc {
	vec := func(k int) []float32 {
		v := make([]float32, 16)
		v[k%16] = 1
		return v
	}
	return []search.IndexDoc{
		{Doc: search.Doc{ID: "doc_b", LibraryID: "lib_2", Category: "Finance"}, Title: "Close the books", Body: []string{"reconcile accounts"},
			Labels: []string{"Finance"}, Vector: vec(1), Recordings: []search.RecordingVector{{ID: "rec_1", Vector: vec(5)}}},
		{Doc: search.Doc{ID: "doc_a", LibraryID: "lib_1", Category: "IT"}, Title: "Reset a password", Body: []string{"open the admin console"},
			Labels: []string{"IT"}, Vector: vec(2), Recordings: []search.RecordingVector{{ID: "rec_1", Vector: vec(5)}, {ID: "rec_0", Vector: vec(6)}}},
		{Doc: search.Doc{ID: "doc_c", LibraryID: "lib_1", Category: "IT"}, Title: "Order a laptop", Vector: vec(3)},
	}
}

func TestFromDocsKeepsARecordingOnce(t *testing.T) {
	e, _ := offline.NewHashing(16, nil)
	docs := smallDocs()
	x, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := x.Stats(); st.Documents != 3 || st.Recordings != 2 || st.VectorBytes != (64+4+4+8)*5 {
		t.Fatalf("stats %+v; want 3 documents, 2 recordings, 5 vectors of 64 int8 codes, a scale, a sign dot product and 64 sign bits", st)
	}
	// The recording behind doc_a and doc_b is found through both.
	q := &search.Query{Text: "zzz", Vector: unit(16, 5), Libraries: []string{"lib_1", "lib_2"}}
	rules := search.DefaultRules(e.ID())
	q.Rules = &rules
	var got []string
	err = x.Candidates(context.Background(), q, func(c search.Candidate) {
		if c.Recordings > 0.99 {
			got = append(got, c.Doc.ID)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"doc_a", "doc_b"}; !slices.Equal(got, want) {
		t.Fatalf("documents with the recording: %v, want %v", got, want)
	}
}

func TestFromDocsRefuses(t *testing.T) {
	e, _ := offline.NewHashing(16, nil)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		change func(docs []search.IndexDoc) []search.IndexDoc
		opt    localsearch.Options
		want   string // in the error
	}{
		{name: "document vector of other dimensions", change: func(docs []search.IndexDoc) []search.IndexDoc {
			docs[2].Vector = make([]float32, 7)
			return docs
		}, want: "document doc_c"},
		{name: "recording vector of other dimensions", change: func(docs []search.IndexDoc) []search.IndexDoc {
			docs[1].Recordings[1].Vector = make([]float32, 1024)
			return docs
		}, want: "recording rec_0"},
		{name: "missing vector", change: func(docs []search.IndexDoc) []search.IndexDoc {
			docs[0].Vector = nil
			return docs
		}, want: "document doc_b"},
		{name: "NaN", change: func(docs []search.IndexDoc) []search.IndexDoc {
			docs[1].Recordings[1].Vector[3] = float32(math.NaN())
			return docs
		}, want: "recording rec_0: a vector holding a NaN"},
		{name: "duplicate document", change: func(docs []search.IndexDoc) []search.IndexDoc {
			dup := docs[2]
			dup.LibraryID = "lib_2"
			return append(docs, dup)
		}, want: "document doc_c is given twice"},
		{name: "cancelled", ctx: cancelled, change: func(docs []search.IndexDoc) []search.IndexDoc { return docs }, want: context.Canceled.Error()},
		{name: "fit", opt: localsearch.Options{Fit: true}, change: func(docs []search.IndexDoc) []search.IndexDoc { return docs }, want: "cannot fit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			x, err := localsearch.FromDocs(ctx, c.change(smallDocs()), e, c.opt)
			if err == nil {
				t.Fatalf("built an index of %+v; want an error", x.Stats())
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q; want one saying %q", err, c.want)
			}
			if c.ctx != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v is not context.Canceled", err)
			}
		})
	}
}

func TestFromDocsRefusesTooManyLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("65,536 documents")
	}
	e, _ := offline.NewHashing(16, nil)
	docs := make([]search.IndexDoc, 1<<16)
	for i := range docs {
		id := fmt.Sprintf("%06d", i)
		docs[i] = search.IndexDoc{Doc: search.Doc{ID: "doc_" + id, LibraryID: "lib_" + id}, Vector: make([]float32, 16)}
	}
	_, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err == nil || !strings.Contains(err.Error(), "libraries") {
		t.Fatalf("error %v; want one about too many libraries", err)
	}
	if _, err := localsearch.FromDocs(context.Background(), docs[:1<<16-1], e, localsearch.Options{}); err != nil {
		t.Fatalf("65,535 libraries: %v", err)
	}
}

func TestFromDocsLeavesItsInputAlone(t *testing.T) {
	e, _ := offline.NewHashing(16, nil)
	docs := smallDocs()
	docs[2].Vector = make([]float32, 16)
	docs[2].Vector[0], docs[2].Vector[1] = 3, 4 // not of unit length: normalised in the index only
	before := make([]search.IndexDoc, len(docs))
	for i, d := range docs {
		before[i] = d
		before[i].Vector = slices.Clone(d.Vector)
	}
	x, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		if docs[i].ID != before[i].ID || !slices.Equal(docs[i].Vector, before[i].Vector) {
			t.Fatalf("FromDocs changed document %d: %+v, was %+v", i, docs[i], before[i])
		}
	}
	// The index holds its own, normalised copy: clobbering the input changes nothing.
	for i := range docs {
		clear(docs[i].Vector)
	}
	v := make([]float32, 16)
	v[0], v[1] = 0.6, 0.8
	q := &search.Query{Vector: v, Libraries: []string{"lib_1"}}
	page, _, err := x.MostActive(context.Background(), q, search.Filter{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range page {
		if c.Doc.ID == "doc_c" && (c.Semantic < 0.999 || c.Semantic > 1.001) {
			t.Fatalf("doc_c's similarity is %v; want 1 (its vector, normalised)", c.Semantic)
		}
	}
}

func unit(dims, k int) []float32 {
	v := make([]float32, dims)
	v[k] = 1
	return v
}

// TestFromDocsKeepsTheFirstRecordingVector: the indexer embeds a recording
// once per document it is behind, so its vectors may differ (rounding, or an
// edit that only some documents were indexed again after). The snapshot is
// not refused: the first document's vector (in the index's order) is kept.
func TestFromDocsKeepsTheFirstRecordingVector(t *testing.T) {
	e, _ := offline.NewHashing(16, nil)
	docs := smallDocs()
	docs[0].Recordings[0].Vector = unit(16, 9) // doc_b, of lib_2: after doc_a
	x, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := x.Stats(); st.Recordings != 2 {
		t.Fatalf("%d recordings; want 2", st.Recordings)
	}
	rules := search.DefaultRules(e.ID())
	q := &search.Query{Text: "zzz", Vector: unit(16, 5), Libraries: []string{"lib_1", "lib_2"}, Rules: &rules}
	err = x.Candidates(context.Background(), q, func(c search.Candidate) {
		if (c.Doc.ID == "doc_a" || c.Doc.ID == "doc_b") && math.Abs(c.Recordings-1) > 2e-3 {
			t.Errorf("%s: recording similarity %v; want 1 (doc_a's vector kept), within int8 rounding", c.Doc.ID, c.Recordings)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
