package relevance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

// Bounds of the API's q, in characters after trimming.
const (
	MinQueryChars = doclib.MinQueryLength
	MaxQueryChars = doclib.MaxQueryLength
)

// APIKey is the secret of the one key of every evaluation data set. It sees
// every library and is never metered (its workspace brings its own provider
// key).
const APIKey = "dlk_eval_relevance_full_scope"

// The fixed parts of an evaluation data set: fixed timestamps make runs
// repeatable (the fallback's "most active" order reads lastSeen).
const (
	workspaceID = "ws_eval"
	deviceID    = "dev_eval"
	keyID       = "key_eval"
	libraryID   = "lib_eval"
	sectionKey  = "text"
	stamp       = "2026-01-01T00:00:00Z"
	// category is every document's: the data set needs one, and doclib indexes
	// it as a word of every document (so does the BM25 baseline). A made-up
	// word no query of these collections holds keeps it inert.
	category = "beir"
)

// Titles. titleChars is the data set's limit on a document title
// (shared/data/dataset/limits.go, maxTitleChars); titleWords is how many words of
// the text stand in for a missing title.
const (
	titleChars = 500
	titleWords = 10
	// untitled is the title of a document with neither title nor text: it must
	// say something, and "…" holds no word, so it adds nothing to the index.
	untitled = "…"
)

// Mapping links the corpus IDs and the data set's document IDs both ways.
type Mapping struct {
	ToDoc    map[string]string // corpus ID -> doc_…
	ToCorpus map[string]string // doc_… -> corpus ID
}

var plainID = regexp.MustCompile(`^` + dataset.IDPattern + `$`)

// documentID derives a document ID from a corpus ID: doc_ and the corpus ID
// when that makes a valid ID, else doc_h and a hash of it.
func documentID(corpusID string) string {
	if plainID.MatchString(corpusID) {
		return "doc_" + corpusID
	}
	sum := sha256.Sum256([]byte(corpusID))
	return "doc_h" + hex.EncodeToString(sum[:16])
}

// File returns the collection as a data-set file: one workspace on the team
// plan that brings its own provider key (so no AI credit is spent), one
// device, one key (APIKey) to every library, one library whose template has one
// text section, and one document per corpus line, in corpus order.
//
// A document's title is the corpus title, or, when that is empty, the first
// titleWords words of the text followed by "…"; either is cut at a word
// boundary to the data set's limit. Its content is the text (possibly empty)
// in the one section.
func (c *Collection) File() (*dataset.File, Mapping) {
	m := Mapping{ToDoc: make(map[string]string, len(c.Docs)), ToCorpus: make(map[string]string, len(c.Docs))}
	f := &dataset.File{
		Workspaces: []dataset.Workspace{{ID: workspaceID, Name: "Relevance evaluation", Plan: "team",
			OwnProviderKey: true, Subscription: "active"}},
		Devices: []dataset.Device{{ID: deviceID, WorkspaceID: workspaceID, Status: "active"}},
		APIKeys: []dataset.APIKey{{ID: keyID, WorkspaceID: workspaceID, DeviceID: deviceID, Secret: APIKey,
			Libraries: []string{"*"}, RecordingDetails: true}},
		Libraries: []dataset.Library{{ID: libraryID, WorkspaceID: workspaceID, Name: libraryName(c.Name),
			Slug: slug(c.Name), Description: "Public IR test collection " + c.Name + " (BEIR layout), for doclib-admin eval.",
			CreatedAt: stamp, UpdatedAt: stamp,
			Schema: dataset.Schema{Version: 1, Sections: []dataset.Section{{Key: sectionKey, Title: "Text", Type: "text"}}}}},
		Documents: make([]dataset.Document, 0, len(c.Docs)),
	}
	for i, d := range c.Docs {
		id := documentID(d.ID)
		for n := 2; m.ToCorpus[id] != ""; n++ { // two corpus IDs that hash or read alike
			id = fmt.Sprintf("%s-%d", documentID(d.ID), n)
		}
		m.ToDoc[d.ID], m.ToCorpus[id] = id, d.ID
		f.Documents = append(f.Documents, dataset.Document{ID: id, LibraryID: libraryID,
			Slug: "doc-" + strconv.Itoa(i+1), Title: Title(d.Title, d.Text), Category: category,
			Tags: []string{}, Applications: []string{}, DeviceCount: 1,
			FirstSeen: stamp, LastSeen: stamp, CreatedAt: stamp, UpdatedAt: stamp,
			Content: map[string]any{sectionKey: d.Text}})
	}
	return f, m
}

// Dataset returns the collection as a validated data set (File, through the
// validator of dataset.Load), with the mapping of its document IDs.
func (c *Collection) Dataset() (*doclib.DataSet, Mapping, error) {
	f, m := c.File()
	d, err := dataset.Validate(f)
	if err != nil {
		return nil, m, fmt.Errorf("%s as a data set: %w", c.Name, err)
	}
	return d, m, nil
}

func libraryName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "Collection"
	}
	return cutWords(name, 200)
}

// slug makes a library slug of a folder name ("trec-covid"), or "collection".
func slug(name string) string {
	s := dataset.Slugify(name, 101)
	if s == "" || len(s) > 100 {
		return "collection"
	}
	return s
}

// Title is a document's title: the corpus title when it has one, else the
// first titleWords words of the text (followed by "…" when the text goes on),
// cut at a word boundary to the data set's 500 characters.
func Title(title, text string) string {
	if t := strings.Join(strings.Fields(title), " "); t != "" {
		return cutWords(t, titleChars)
	}
	words := strings.Fields(text)
	if len(words) == 0 {
		return untitled
	}
	t := strings.Join(words[:min(titleWords, len(words))], " ")
	if len(words) <= titleWords && utf8.RuneCountInString(t) <= titleChars {
		return t
	}
	return cutWords(t, titleChars-1) + "…"
}

// CutQuery returns a query as the API takes it: trimmed and, when it is longer
// than MaxQueryChars characters, cut at the last word boundary that fits (or
// at MaxQueryChars within a word longer than that). cut reports whether it
// was shortened.
func CutQuery(q string) (out string, cut bool) {
	q = strings.TrimSpace(q)
	out = cutWords(q, MaxQueryChars)
	return out, out != q
}

// cutWords cuts s to at most max characters, at the last white space that
// leaves a non-empty head, and trims what precedes the cut.
func cutWords(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	end, n := 0, 0 // byte offset of the rune after the max first ones
	for i := range s {
		if n == max {
			end = i
			break
		}
		n++
	}
	head := s[:end]
	next, _ := utf8.DecodeRuneInString(s[end:])
	if unicode.IsSpace(next) {
		return strings.TrimRightFunc(head, unicode.IsSpace)
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
		if t := strings.TrimRightFunc(head[:i], unicode.IsSpace); t != "" {
			return t
		}
	}
	return head // one word longer than max: cut within it
}
