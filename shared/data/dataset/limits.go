package dataset

import (
	"strconv"
	"unicode/utf8"

	doclib "github.com/doclib/doclib/shared"
)

// Limits of the format (docs/dataset.md, "Limits"). Local mode could hold more,
// but a data set is only worth accepting if every backend can hold it: the
// DynamoDB import stores each document, recording and library as one item of at
// most 400 KB (409,600 bytes), and its own size check should never be what
// refuses a file that local mode took. The budgets, in the worst case of 4-byte
// characters and 6-byte JSON escapes:
//
//   - document item: content 300,000 + title 2,000 + category 400 + 50 tags and
//     50 applications of 400 bytes 40,400 + IDs, slug, dates, counts ~1,500:
//     about 344,000 bytes;
//   - recording item: questions and steps 300,000 + title 2,000 + 100 document
//     IDs 6,900 + the rest ~500: about 310,000 bytes;
//   - library item: label lists 200,000 + description 40,000 + 50 sections
//     65,000 + 100 earlier slugs 10,100 + name 800 + the rest ~1,000: about
//     317,000 bytes;
//   - key item: 1,000 library IDs of at most 68 bytes: about 70,000 bytes;
//   - edge item: two titles 4,000 + label 400; its sort key, the target's ID and
//     the label, at most 472 of DynamoDB's 1,024 bytes.
//
// A graph chunk holds whole documents and edges of at most ~64,000 bytes each and
// is cut at 300 KB by the import itself.
const (
	maxNameChars          = 200     // workspace and library names
	maxTitleChars         = 500     // document and recording titles
	maxSectionTitleChars  = 200     // template section titles
	maxDescriptionChars   = 10_000  // library descriptions
	maxLabelChars         = 100     // a category, tag, application or edge label
	maxLabelsPerDocument  = 50      // tags, and applications, of one document
	maxPreviousSlugs      = 100     // earlier slugs of one library
	maxSections           = 50      // sections of one template
	maxKeyLibraries       = 1_000   // library IDs of one key
	maxRecordingDocuments = 100     // documents one recording is linked to
	maxContentBytes       = 300_000 // a document's content, as compact JSON
	maxRecordingBytes     = 300_000 // a recording's questions and steps, as JSON
	maxLibraryLabelBytes  = 200_000 // a library's derived label lists, as JSON
)

// jsonLen is the length of s written as a JSON string by encoding/json, quotes
// included, with HTML escaping (the longer of its two forms, and the one the
// DynamoDB import writes).
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// questionOverhead bounds what a question adds to its strings written as JSON:
// its field names, punctuation and sequence order.
const questionOverhead = 80

// recordingBytes is the size of a recording's questions and steps written as
// JSON (an upper bound that is at most a few bytes per element over). Only a
// recording whose text could reach the limit is measured character by character.
func recordingBytes(r Recording) int {
	raw := 4
	for _, q := range r.Questions {
		raw += len(q.ID) + len(q.Question) + len(q.Response) + questionOverhead
	}
	for _, s := range r.Steps {
		raw += len(s) + 1
	}
	if 6*raw <= maxRecordingBytes { // no escape is longer than 6 bytes
		return raw
	}
	n := 4
	for _, q := range r.Questions {
		n += jsonLen(q.ID) + jsonLen(q.Question) + jsonLen(q.Response) + questionOverhead
	}
	for _, s := range r.Steps {
		n += jsonLen(s) + 1
	}
	return n
}

// labelBytes is the size of a library's derived categories, tags and
// applications written as JSON with their document counts, as the DynamoDB
// import stores them in the library's item.
func labelBytes(l *doclib.Library) int {
	n := 0
	for _, list := range [][]doclib.Label{l.Categories, l.Tags, l.Applications} {
		n += 2
		for _, lb := range list {
			n += jsonLen(lb.Name) + len(`{"Name":,"DocumentCount":},`) + len(strconv.Itoa(lb.DocumentCount))
		}
	}
	return n
}
