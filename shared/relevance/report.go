package relevance

import (
	"encoding/json"
	"fmt"
	"github.com/doclib/doclib/shared/search"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// tieEpsilon is how close two nDCG@10 values count as a tie.
const tieEpsilon = 1e-9

// Report is the evaluation of doclib and of the BM25 baseline on one collection.
type Report struct {
	Collection string `json:"collection"`
	// Embedder is the ID of the embedder doclib ran with.
	Embedder  string `json:"embedder,omitempty"`
	Documents int    `json:"documents"`
	// Queries are the queries evaluated: those with a document judged relevant.
	Queries int `json:"queries"`
	// QueriesCut counts the evaluated queries cut to the API's 512 characters.
	QueriesCut int `json:"queriesCut"`
	// Unjudged counts the queries of queries.jsonl left out for want of a
	// relevant document; SkippedQrels the judgments of queries it lacks.
	Unjudged     int `json:"unjudgedQueries"`
	SkippedQrels int `json:"skippedQrels"`
	// Doclib and BM25 are the mean metrics over the queries.
	Doclib Scores `json:"doclib"`
	BM25   Scores `json:"bm25"`
	// NDCGRatio is doclib's nDCG@10 over BM25's (0 when BM25's is 0).
	NDCGRatio float64 `json:"ndcgRatio"`
	// Wins, Losses and Ties compare doclib with BM25 query by query on nDCG@10.
	Wins   int `json:"wins"`
	Losses int `json:"losses"`
	Ties   int `json:"ties"`
	// SignTestP is the two-sided p-value of the paired sign test on Wins
	// against Losses (SignTest).
	SignTestP float64 `json:"signTestP"`
	// FallbackRate is the share of queries doclib answered with the fallback.
	FallbackRate float64 `json:"fallbackRate"`
	// Signals say how often each signal fired in doclib's top 10.
	Signals []SignalShare `json:"signals"`
	// MeanMatchedTotal is the mean of the responses' matchedTotal, and
	// MedianMatchedTotal their median.
	MeanMatchedTotal   float64 `json:"meanMatchedTotal"`
	MedianMatchedTotal float64 `json:"medianMatchedTotal"`
	// SemanticThreshold and RecordingsThreshold are the rules the meaning
	// signals ran with (calibrated, unless set explicitly), and Chance the
	// chance level the calibration measured (0 without one).
	SemanticThreshold   float64 `json:"semanticThreshold"`
	RecordingsThreshold float64 `json:"recordingsThreshold"`
	Chance              float64 `json:"chance"`
	// Calibration is what the index measured of its embedder.
	Calibration *search.Calibration `json:"calibration,omitempty"`
	// MeanBM25Matched is the mean number of documents BM25 scores above 0.
	MeanBM25Matched float64 `json:"meanBM25Matched"`
	Timing          Timing  `json:"timing"`
	// Ranged is what the index read by range, with Options.Segments.
	Ranged *Ranged `json:"ranged,omitempty"`
	// PerQuery holds each evaluated query's figures, in file order.
	PerQuery []QueryResult `json:"perQuery,omitempty"`
}

// Ranged is what an index written in segments and read by range read
// (Options.Segments): its segments, those opened by range, and the reads of
// their cold parts the queries made, their bytes and the blocks the cache
// dropped for its budget.
type Ranged struct {
	Segments int   `json:"segments"`
	Opened   int   `json:"opened"`
	Reads    int64 `json:"reads"`
	Bytes    int64 `json:"bytes"`
	Dropped  int64 `json:"dropped"`
}

// SignalShare is how often one signal fired in doclib's top 10.
type SignalShare struct {
	Signal string `json:"signal"`
	// Queries is the share of queries where at least one of the top 10 carried it.
	Queries float64 `json:"queries"`
	// Hits is the share of the top-10 hits (over all queries) that carried it.
	Hits float64 `json:"hits"`
}

// Timing says where the time went.
type Timing struct {
	Index  time.Duration // the data set and doclib's index
	Search time.Duration // doclib answering every query
	BM25   time.Duration // the BM25 index and rankings
	Wall   time.Duration // all of it
}

// MarshalJSON writes the durations in seconds.
func (t Timing) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]float64{"indexSeconds": t.Index.Seconds(), "searchSeconds": t.Search.Seconds(),
		"bm25Seconds": t.BM25.Seconds(), "wallSeconds": t.Wall.Seconds()})
}

// QueryResult is one query's evaluation.
type QueryResult struct {
	ID string `json:"id"`
	// Text is what was searched for (cut when Cut).
	Text     string `json:"text"`
	Cut      bool   `json:"cut,omitempty"`
	Relevant int    `json:"relevant"`
	Doclib   Scores `json:"doclib"`
	BM25     Scores `json:"bm25"`
	// Answer is doclib's.
	Answer Answer `json:"answer"`
	// BM25Ranked are BM25's first 10 corpus IDs; BM25Matched counts the
	// documents it scored above 0.
	BM25Ranked  []string `json:"bm25Ranked"`
	BM25Matched int      `json:"bm25Matched"`
}

// summarize computes the report's means and counts from PerQuery.
func (r *Report) summarize() {
	n := len(r.PerQuery)
	r.Queries = n
	if n == 0 {
		r.SignTestP = 1
		return
	}
	fired := map[string]int{}
	hits := 0
	carried := map[string]int{}
	for _, q := range r.PerQuery {
		if q.Cut {
			r.QueriesCut++
		}
		r.Doclib.NDCG += q.Doclib.NDCG
		r.Doclib.Recall += q.Doclib.Recall
		r.Doclib.MRR += q.Doclib.MRR
		r.BM25.NDCG += q.BM25.NDCG
		r.BM25.Recall += q.BM25.Recall
		r.BM25.MRR += q.BM25.MRR
		switch d := q.Doclib.NDCG - q.BM25.NDCG; {
		case d > tieEpsilon:
			r.Wins++
		case d < -tieEpsilon:
			r.Losses++
		default:
			r.Ties++
		}
		if q.Answer.Fallback {
			r.FallbackRate++
		}
		r.MeanMatchedTotal += float64(q.Answer.MatchedTotal)
		r.MeanBM25Matched += float64(q.BM25Matched)
		hits += len(q.Answer.Ranked)
		for s, c := range q.Answer.Signals {
			if c > 0 {
				fired[s]++
				carried[s] += c
			}
		}
	}
	f := float64(n)
	for _, p := range []*float64{&r.Doclib.NDCG, &r.Doclib.Recall, &r.Doclib.MRR, &r.BM25.NDCG, &r.BM25.Recall,
		&r.BM25.MRR, &r.FallbackRate, &r.MeanMatchedTotal, &r.MeanBM25Matched} {
		*p /= f
	}
	if r.BM25.NDCG > 0 {
		r.NDCGRatio = r.Doclib.NDCG / r.BM25.NDCG
	}
	r.SignTestP = SignTest(r.Wins, r.Losses)
	matched := make([]int, n)
	for i, q := range r.PerQuery {
		matched[i] = q.Answer.MatchedTotal
	}
	slices.Sort(matched)
	r.MedianMatchedTotal = float64(matched[n/2])
	if n%2 == 0 {
		r.MedianMatchedTotal = float64(matched[n/2-1]+matched[n/2]) / 2
	}
	names := append([]string(nil), Signals...)
	for s := range fired { // a signal this package does not know yet
		if !contains(names, s) {
			names = append(names, s)
		}
	}
	for _, s := range names {
		share := SignalShare{Signal: s, Queries: float64(fired[s]) / f}
		if hits > 0 {
			share.Hits = float64(carried[s]) / float64(hits)
		}
		r.Signals = append(r.Signals, share)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// WriteJSON writes reports as {"collections": [...]}, with each query's
// figures when perQuery is true.
func WriteJSON(w io.Writer, reports []*Report, perQuery bool) error {
	out := make([]Report, len(reports))
	for i, r := range reports {
		out[i] = *r
		if !perQuery {
			out[i].PerQuery = nil
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Collections []Report `json:"collections"`
	}{out})
}

// signalLabels are the short names of the signals in the text tables.
var signalLabels = map[string]string{"lexical": "LEXICAL", "fuzzy": "FUZZY", "semantic": "SEMANTIC",
	"source_recordings": "RECORDINGS", "fallback": "FALLBACK"}

// WriteText writes reports as tables for people, and each query's nDCG@10
// when perQuery is true.
func WriteText(w io.Writer, reports []*Report, perQuery bool) error {
	if len(reports) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Relevance: doclib (embedder %s) against BM25 (k1 %.1f, b %.2f), first %d results\n\n",
		reports[0].Embedder, BM25K1, BM25B, Cutoff)
	fmt.Fprintln(tw, "COLLECTION\tDOCS\tQUERIES\tCUT\tnDCG@10 doclib\tBM25\tRATIO\tR@10 doclib\tBM25\tMRR@10 doclib\tBM25\tWIN/LOSS/TIE\tSIGN TEST p")
	for _, r := range reports {
		ratio := "-"
		if r.BM25.NDCG > 0 {
			ratio = fmt.Sprintf("%.2f", r.NDCGRatio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.3f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d/%d/%d\t%s\n",
			r.Collection, thousands(r.Documents), r.Queries, r.QueriesCut, r.Doclib.NDCG, r.BM25.NDCG, ratio,
			r.Doclib.Recall, r.BM25.Recall, r.Doclib.MRR, r.BM25.MRR, r.Wins, r.Losses, r.Ties, pValue(r.SignTestP))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "How doclib answered: per signal, the share of queries where it fired in the top 10 / the share of top-10 hits carrying it")
	fmt.Fprintln(tw)
	header := []string{"COLLECTION", "FALLBACK"}
	for _, s := range reports[0].Signals {
		if s.Signal == "fallback" {
			continue
		}
		label := signalLabels[s.Signal]
		if label == "" {
			label = strings.ToUpper(s.Signal)
		}
		header = append(header, label)
	}
	header = append(header, "MATCHED (mean / median)", "BM25 MATCHED", "SEMANTIC AT (chance)", "INDEX", "SEARCH", "WALL")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range reports {
		row := []string{r.Collection, percent(r.FallbackRate)}
		for _, s := range r.Signals {
			if s.Signal != "fallback" {
				row = append(row, percent(s.Queries)+" / "+percent(s.Hits))
			}
		}
		row = append(row, fmt.Sprintf("%.1f / %.0f", r.MeanMatchedTotal, r.MedianMatchedTotal), fmt.Sprintf("%.1f", r.MeanBM25Matched),
			fmt.Sprintf("%.3f (%.3f)", r.SemanticThreshold, r.Chance),
			seconds(r.Timing.Index), seconds(r.Timing.Search), seconds(r.Timing.Wall))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range reports {
		if g := r.Ranged; g != nil {
			fmt.Fprintf(w, "%s: read by range: %d of %d segments opened by range; the queries made %s reads of %.1f MB, and the cache dropped %s blocks\n",
				r.Collection, g.Opened, g.Segments, thousands(int(g.Reads)), float64(g.Bytes)/1e6, thousands(int(g.Dropped)))
		}
	}
	for _, r := range reports {
		if c := r.Calibration; c != nil {
			d := c.Documents
			var lengths []string
			for _, l := range d.Lengths {
				upTo, words := fmt.Sprintf("≤%d words", l.Words), l.Words
				if l.Words == 0 {
					upTo, words = "longer", 1<<20
				}
				lengths = append(lengths, fmt.Sprintf("%s %.3f/%.3f→%.3f", upTo, l.P50, l.P95, d.ThresholdFor(words)))
			}
			fmt.Fprintf(w, "%s: chance of a query-like text with another document p50 %.3f p95 %.3f (%s pairs); random letters' best p50 %.3f max %.3f (%d strings); by length p50/p95→threshold: %s\n",
				r.Collection, d.P50, d.P95, thousands(d.Pairs), d.GibberishMedian, d.GibberishMax, d.Gibberish, strings.Join(lengths, ", "))
		}
	}
	if !perQuery {
		return nil
	}
	for _, r := range reports {
		fmt.Fprintf(w, "\n%s, per query (nDCG@10; FB: answered by the fallback):\n", r.Collection)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "QUERY\tDOCLIB\tBM25\tDIFF\tRELEVANT\tMATCHED\tSIGNALS IN TOP 10\tTEXT")
		for _, q := range r.PerQuery {
			fb := ""
			if q.Answer.Fallback {
				fb = " FB"
			}
			var sig []string
			for _, s := range r.Signals {
				if c := q.Answer.Signals[s.Signal]; c > 0 && s.Signal != "fallback" {
					sig = append(sig, fmt.Sprintf("%s %d", s.Signal, c))
				}
			}
			text := q.Text
			if q.Cut {
				text += " [cut]"
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t%d\t%d%s\t%s\t%s\n", q.ID, q.Doclib.NDCG, q.BM25.NDCG,
				q.Doclib.NDCG-q.BM25.NDCG, q.Relevant, q.Answer.MatchedTotal, fb, strings.Join(sig, ", "), clip(text))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func percent(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.0fs", d.Seconds())
}

func pValue(p float64) string {
	switch {
	case p < 0.001:
		return "<0.001"
	case math.IsNaN(p):
		return "-"
	}
	return fmt.Sprintf("%.3f", p)
}

// thousands writes n with thousands separators: 11,429.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
