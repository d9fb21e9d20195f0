// Package relevance measures doclib's search on public IR test collections in
// the BEIR layout (corpus.jsonl, queries.jsonl, qrels.tsv): each collection
// becomes a data set, is served by the same handler as doclib-server's, and its
// queries are sent to GET /search/documents. A textbook BM25 over the same text
// and analysis, computed in the same run, is the yardstick.
package relevance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The files of a BEIR folder.
const (
	CorpusFile  = "corpus.jsonl"
	QueriesFile = "queries.jsonl"
	QrelsFile   = "qrels.tsv"
)

// qrelsHeader is the first line qrels.tsv must have.
const qrelsHeader = "query-id\tcorpus-id\tscore"

// Collection is a BEIR test collection as read from its folder.
type Collection struct {
	// Name is the folder's base name ("npl").
	Name string
	// Dir is the folder it was read from.
	Dir string
	// Docs are the corpus lines, in file order.
	Docs []Doc
	// Queries are the lines of queries.jsonl, in file order.
	Queries []Query
	// Qrels holds every judgment: query ID -> corpus ID -> grade. A grade
	// above 0 is relevant.
	Qrels map[string]map[string]int
	// SkippedQrels counts the judgments left out because their query is not
	// in queries.jsonl.
	SkippedQrels int
}

// Doc is a line of corpus.jsonl.
type Doc struct {
	ID, Title, Text string
}

// Query is a line of queries.jsonl, with the text that is searched for.
type Query struct {
	ID string
	// Text is the query as the file has it.
	Text string
	// Search is what doclib and BM25 are both given: Text, trimmed, and cut at
	// a word boundary to the API's MaxQueryChars when it is longer.
	Search string
	// Cut is true when Search is shorter than Text for that reason.
	Cut bool
}

// Relevant returns the corpus IDs judged relevant (grade above 0) to a query,
// with their grades.
func (c *Collection) Relevant(queryID string) map[string]int {
	out := map[string]int{}
	for id, g := range c.Qrels[queryID] {
		if g > 0 {
			out[id] = g
		}
	}
	return out
}

// Judged returns the queries that have a document judged relevant, in file
// order: the ones evaluated.
func (c *Collection) Judged() []Query {
	var out []Query
	for _, q := range c.Queries {
		for _, g := range c.Qrels[q.ID] {
			if g > 0 {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

// LoadBEIR reads a BEIR folder strictly: every line of the three files must be
// well formed, IDs must be unique, and every judgment must name a document of
// the corpus. A judgment of a query that queries.jsonl does not have is skipped
// and counted (BEIR folders often keep the judgments of a split's other
// queries).
func LoadBEIR(dir string) (*Collection, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such folder; give a BEIR folder holding %s, %s and %s", dir, CorpusFile, QueriesFile, QrelsFile)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is a file; give a BEIR folder holding %s, %s and %s", dir, CorpusFile, QueriesFile, QrelsFile)
	}
	name := filepath.Base(filepath.Clean(dir))
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs)
	}
	c := &Collection{Name: name, Dir: dir, Qrels: map[string]map[string]int{}}

	docIDs := map[string]int{} // ID -> line
	err = readLines(dir, CorpusFile, func(line int, b []byte) error {
		var r struct {
			ID    *string `json:"_id"`
			Title *string `json:"title"`
			Text  *string `json:"text"`
		}
		if err := decodeLine(b, &r); err != nil {
			return err
		}
		switch {
		case r.ID == nil || *r.ID == "":
			return errors.New(`"_id" is missing or empty`)
		case r.Text == nil:
			return fmt.Errorf(`document %q has no "text" (an empty one is fine: "text": "")`, *r.ID)
		}
		if prev, ok := docIDs[*r.ID]; ok {
			return fmt.Errorf("document %q is already on line %d", *r.ID, prev)
		}
		docIDs[*r.ID] = line
		d := Doc{ID: *r.ID, Text: *r.Text}
		if r.Title != nil {
			d.Title = *r.Title
		}
		c.Docs = append(c.Docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.Docs) == 0 {
		return nil, fmt.Errorf("%s: no documents", filepath.Join(dir, CorpusFile))
	}

	queryIDs := map[string]int{}
	err = readLines(dir, QueriesFile, func(line int, b []byte) error {
		var r struct {
			ID   *string `json:"_id"`
			Text *string `json:"text"`
		}
		if err := decodeLine(b, &r); err != nil {
			return err
		}
		switch {
		case r.ID == nil || *r.ID == "":
			return errors.New(`"_id" is missing or empty`)
		case r.Text == nil:
			return fmt.Errorf(`query %q has no "text"`, *r.ID)
		}
		if prev, ok := queryIDs[*r.ID]; ok {
			return fmt.Errorf("query %q is already on line %d", *r.ID, prev)
		}
		queryIDs[*r.ID] = line
		q := Query{ID: *r.ID, Text: *r.Text}
		q.Search, q.Cut = CutQuery(q.Text)
		if n := utf8.RuneCountInString(q.Search); n < MinQueryChars {
			return fmt.Errorf("query %q has %d characters after trimming; the API takes %d to %d", q.ID, n, MinQueryChars, MaxQueryChars)
		}
		c.Queries = append(c.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.Queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", filepath.Join(dir, QueriesFile))
	}

	judged := 0
	err = readLines(dir, QrelsFile, func(line int, b []byte) error {
		s := strings.TrimSuffix(string(b), "\r")
		if line == 1 {
			if s != qrelsHeader {
				return fmt.Errorf("the first line must be the header %q, not %q", qrelsHeader, clip(s))
			}
			return nil
		}
		f := strings.Split(s, "\t")
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields separated by tabs (query-id, corpus-id, score), got %d in %q", len(f), clip(s))
		}
		grade, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil {
			return fmt.Errorf("score %q is not a whole number", clip(f[2]))
		}
		qid, did := f[0], f[1]
		if _, ok := docIDs[did]; !ok {
			return fmt.Errorf("corpus-id %q is not in %s", clip(did), CorpusFile)
		}
		if _, ok := queryIDs[qid]; !ok {
			c.SkippedQrels++
			return nil
		}
		m := c.Qrels[qid]
		if m == nil {
			m = map[string]int{}
			c.Qrels[qid] = m
		}
		if _, dup := m[did]; dup {
			return fmt.Errorf("query %q and document %q are judged twice", qid, did)
		}
		m[did] = grade
		judged++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if judged == 0 {
		return nil, fmt.Errorf("%s: no judgment of a query in %s", filepath.Join(dir, QrelsFile), QueriesFile)
	}
	return c, nil
}

// readLines calls f with each non-blank line of dir/file (numbered from 1, as
// an editor shows them) and names the file and line in f's error.
func readLines(dir, file string, f func(line int, b []byte) error) error {
	path := filepath.Join(dir, file)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no %s in this folder; a BEIR folder holds %s, %s and %s", dir, file, CorpusFile, QueriesFile, QrelsFile)
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	r := bufio.NewReaderSize(fh, 1<<20)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 || line == 1 && file == QrelsFile {
			if ferr := f(line, bytes.TrimRight(b, "\n")); ferr != nil {
				return fmt.Errorf("%s line %d: %w", path, line, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// decodeLine decodes one JSON object, and nothing after it.
func decodeLine(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%q must be a string, not a JSON %s", te.Field, te.Value)
		}
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line; JSON Lines holds one object per line")
	}
	return nil
}

// clip shortens a value echoed in a message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	return string([]rune(s)[:60]) + "…"
}
