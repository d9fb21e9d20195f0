package api

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Appender is a response shape that writes its own JSON. AppendJSON appends
// exactly what a json.Encoder with SetEscapeHTML(false) writes for the value,
// trailing newline included: the handler uses it for every answer, and a test
// holds the two byte for byte on the demo data and on fuzzed values.
//
// It exists for speed, measured (docs/performance.md, issue 24): encoding/json
// finds each field by reflection and re-scans every json.RawMessage it writes
// (a document's content, most of a traversal's bytes) to compact it. Content
// here is already compact, as the stores hold it, so it is copied as it is;
// anything that is not compact goes through json.Compact as encoding/json
// would.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// AppendJSON implements Appender.
func (v *LibraryList) AppendJSON(b []byte) []byte {
	b = append(b, `{"libraries":`...)
	b = appendList(b, v.Libraries, func(b []byte, l *Library) []byte { return l.appendJSON(b) })
	return append(b, "}\n"...)
}

// AppendJSON implements Appender.
func (v *Library) AppendJSON(b []byte) []byte {
	return append(v.appendJSON(b), '\n')
}

func (v *Library) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, v.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, v.Name)
	b = append(b, `,"description":`...)
	b = appendString(b, v.Description)
	b = append(b, `,"categories":`...)
	b = appendStrings(b, v.Categories)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, v.Tags)
	b = append(b, `,"documentCount":`...)
	b = strconv.AppendInt(b, int64(v.DocumentCount), 10)
	if v.EdgeCount != nil {
		b = append(b, `,"edgeCount":`...)
		b = strconv.AppendInt(b, int64(*v.EdgeCount), 10)
	}
	b = append(b, `,"createdAt":`...)
	b = v.CreatedAt.appendJSON(b)
	b = append(b, `,"updatedAt":`...)
	b = v.UpdatedAt.appendJSON(b)
	return append(b, '}')
}

// AppendJSON implements Appender.
func (v *Tags) AppendJSON(b []byte) []byte {
	return append(appendLabels(append(b, `{"tags":`...), v.Tags), "}\n"...)
}

// AppendJSON implements Appender.
func (v *Categories) AppendJSON(b []byte) []byte {
	return append(appendLabels(append(b, `{"categories":`...), v.Categories), "}\n"...)
}

// AppendJSON implements Appender.
func (v *Applications) AppendJSON(b []byte) []byte {
	return append(appendLabels(append(b, `{"applications":`...), v.Applications), "}\n"...)
}

func appendLabels(b []byte, ls []Label) []byte {
	if ls == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, ls[i].Name)
		b = append(b, `,"documentCount":`...)
		b = strconv.AppendInt(b, int64(ls[i].DocumentCount), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

func (s *Schema) appendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(s.Version), 10)
	b = append(b, `,"sections":`...)
	b = appendList(b, s.Sections, func(b []byte, sec *Section) []byte {
		b = append(b, `{"key":`...)
		b = appendString(b, sec.Key)
		b = append(b, `,"title":`...)
		b = appendString(b, sec.Title)
		b = append(b, `,"type":`...)
		b = appendString(b, sec.Type)
		b = append(b, '}')
		return b
	})
	return append(b, '}')
}

// appendSchemas writes a map of schemas as encoding/json does: keys sorted.
func appendSchemas(b []byte, m map[string]Schema) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		s := m[k]
		b = s.appendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON implements Appender.
func (v *DocumentPage) AppendJSON(b []byte) []byte {
	b = append(b, `{"documents":`...)
	b = appendList(b, v.Documents, func(b []byte, d *DocumentItem) []byte {
		return append(d.appendFields(append(b, '{')), '}')
	})
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(v.Total), 10)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(v.Page), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(v.PageSize), 10)
	b = append(b, `,"schema":`...)
	b = v.Schema.appendJSON(b)
	return append(b, "}\n"...)
}

// appendFields writes the item's fields without the braces, so that Document,
// which embeds it, can go on after them.
func (v *DocumentItem) appendFields(b []byte) []byte {
	b = appendHead(b, v.ID, v.Title, v.Category, v.Tags, v.Applications)
	b = append(b, `,"recordingCount":`...)
	b = strconv.AppendInt(b, int64(v.RecordingCount), 10)
	b = append(b, `,"deviceCount":`...)
	b = strconv.AppendInt(b, int64(v.DeviceCount), 10)
	b = append(b, `,"firstSeen":`...)
	b = v.FirstSeen.appendJSON(b)
	b = append(b, `,"lastSeen":`...)
	b = v.LastSeen.appendJSON(b)
	b = append(b, `,"createdAt":`...)
	b = v.CreatedAt.appendJSON(b)
	b = append(b, `,"updatedAt":`...)
	b = v.UpdatedAt.appendJSON(b)
	b = append(b, `,"content":`...)
	return appendRaw(b, v.Content)
}

// AppendJSON implements Appender.
func (v *Document) AppendJSON(b []byte) []byte {
	b = v.DocumentItem.appendFields(append(b, '{'))
	b = append(b, `,"schema":`...)
	b = v.Schema.appendJSON(b)
	b = append(b, `,"library":`...)
	b = v.Library.appendJSON(b)
	b = append(b, `,"edges":`...)
	b = v.Edges.appendJSON(b)
	return append(b, "}\n"...)
}

func (r *DocumentRef) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, r.Name)
	return append(b, '}')
}

func (e *Edges) appendJSON(b []byte) []byte {
	b = append(b, `{"outgoing":`...)
	b = appendList(b, e.Outgoing, func(b []byte, o *OutgoingEdge) []byte {
		b = append(b, `{"targetDocumentId":`...)
		b = appendString(b, o.TargetDocumentID)
		b = append(b, `,"targetDocumentTitle":`...)
		b = appendString(b, o.TargetDocumentTitle)
		b = append(b, `,"targetLibraryId":`...)
		b = appendString(b, o.TargetLibraryID)
		b = appendEdgeTail(b, o.Label, o.EdgeType, o.RecordingCount, o.Support, o.LowConfidence)
		return b
	})
	b = append(b, `,"incoming":`...)
	b = appendList(b, e.Incoming, func(b []byte, in *IncomingEdge) []byte {
		b = append(b, `{"sourceDocumentId":`...)
		b = appendString(b, in.SourceDocumentID)
		b = append(b, `,"sourceDocumentTitle":`...)
		b = appendString(b, in.SourceDocumentTitle)
		b = append(b, `,"sourceLibraryId":`...)
		b = appendString(b, in.SourceLibraryID)
		b = appendEdgeTail(b, in.Label, in.EdgeType, in.RecordingCount, in.Support, in.LowConfidence)
		return b
	})
	return append(b, '}')
}

// appendEdgeTail writes the fields every edge shape ends with, and the
// closing brace.
func appendEdgeTail(b []byte, label, edgeType string, recordings, support int, low bool) []byte {
	b = append(b, `,"label":`...)
	b = appendString(b, label)
	b = append(b, `,"edgeType":`...)
	b = appendString(b, edgeType)
	b = append(b, `,"recordingCount":`...)
	b = strconv.AppendInt(b, int64(recordings), 10)
	b = append(b, `,"support":`...)
	b = strconv.AppendInt(b, int64(support), 10)
	b = append(b, `,"lowConfidence":`...)
	b = strconv.AppendBool(b, low)
	return append(b, '}')
}

func appendGraphEdges(b []byte, es []GraphEdge) []byte {
	return appendList(b, es, appendGraphEdge)
}

func appendGraphEdge(b []byte, e *GraphEdge) []byte {
	b = append(b, `{"sourceDocumentId":`...)
	b = appendString(b, e.SourceDocumentID)
	b = append(b, `,"sourceDocumentTitle":`...)
	b = appendString(b, e.SourceDocumentTitle)
	b = append(b, `,"targetDocumentId":`...)
	b = appendString(b, e.TargetDocumentID)
	b = append(b, `,"targetDocumentTitle":`...)
	b = appendString(b, e.TargetDocumentTitle)
	return appendEdgeTail(b, e.Label, e.EdgeType, e.RecordingCount, e.Support, e.LowConfidence)
}

func appendGraphDocument(b []byte, d *GraphDocument) []byte {
	b = appendHead(append(b, '{'), d.ID, d.Title, d.Category, d.Tags, d.Applications)
	b = append(b, `,"recordingCount":`...)
	b = strconv.AppendInt(b, int64(d.RecordingCount), 10)
	b = append(b, `,"lastSeen":`...)
	b = d.LastSeen.appendJSON(b)
	return append(b, '}')
}

// AppendJSON implements Appender.
func (v *Graph) AppendJSON(b []byte) []byte {
	b = append(b, `{"documents":`...)
	b = appendList(b, v.Documents, appendGraphDocument)
	b = append(b, `,"edges":`...)
	b = appendGraphEdges(b, v.Edges)
	return appendGraphTail(b, v.Truncated, &v.Schema)
}

// appendGraphTail writes what follows a graph's edges.
func appendGraphTail(b []byte, truncated bool, schema *Schema) []byte {
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, truncated)
	b = append(b, `,"schema":`...)
	b = schema.appendJSON(b)
	return append(b, "}\n"...)
}

// GraphSource gives a graph's items one at a time, as the store holds
// them, so that GraphView can write them without a copy of them all.
type GraphSource interface {
	GraphDocument(i int) GraphDocument
	GraphEdge(i int) GraphEdge
}

// GraphView is a Graph over a GraphSource: its JSON is the Graph's whose
// Documents and Edges are the source's first Documents and Edges items.
// At a graph's caps that is 7,000 items, and building the Graph to write
// it took as long as the writing (docs/performance.md, issue 24).
type GraphView struct {
	Source           GraphSource
	Documents, Edges int
	Truncated        bool
	Schema           Schema
}

// AppendJSON implements Appender.
func (v *GraphView) AppendJSON(b []byte) []byte {
	b = append(b, `{"documents":[`...)
	for i := range v.Documents {
		if i > 0 {
			b = append(b, ',')
		}
		d := v.Source.GraphDocument(i)
		b = appendGraphDocument(b, &d)
	}
	b = append(b, `],"edges":[`...)
	for i := range v.Edges {
		if i > 0 {
			b = append(b, ',')
		}
		e := v.Source.GraphEdge(i)
		b = appendGraphEdge(b, &e)
	}
	b = append(b, ']')
	return appendGraphTail(b, v.Truncated, &v.Schema)
}

// Graph is the view made whole: the Graph it writes.
func (v *GraphView) Graph() *Graph {
	g := &Graph{Documents: make([]GraphDocument, v.Documents), Edges: make([]GraphEdge, v.Edges), Truncated: v.Truncated, Schema: v.Schema}
	for i := range g.Documents {
		g.Documents[i] = v.Source.GraphDocument(i)
	}
	for i := range g.Edges {
		g.Edges[i] = v.Source.GraphEdge(i)
	}
	return g
}

// AppendJSON implements Appender.
func (v *Traversal) AppendJSON(b []byte) []byte {
	b = append(b, `{"rootDocumentId":`...)
	b = appendString(b, v.RootDocumentID)
	b = append(b, `,"direction":`...)
	b = appendString(b, v.Direction)
	b = append(b, `,"label":`...)
	if v.Label == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *v.Label)
	}
	b = append(b, `,"maxDepth":`...)
	b = strconv.AppendInt(b, int64(v.MaxDepth), 10)
	b = append(b, `,"nodes":`...)
	b = appendList(b, v.Nodes, func(b []byte, n *TraverseNode) []byte {
		b = appendHead(append(b, '{'), n.ID, n.Title, n.Category, n.Tags, n.Applications)
		b = append(b, `,"libraryId":`...)
		b = appendString(b, n.LibraryID)
		b = append(b, `,"depth":`...)
		b = strconv.AppendInt(b, int64(n.Depth), 10)
		b = append(b, `,"content":`...)
		b = appendRaw(b, n.Content)
		b = append(b, '}')
		return b
	})
	b = append(b, `,"edges":`...)
	b = appendGraphEdges(b, v.Edges)
	b = append(b, `,"schemas":`...)
	b = appendSchemas(b, v.Schemas)
	return append(b, "}\n"...)
}

// AppendJSON implements Appender.
func (v *SourceRecordings) AppendJSON(b []byte) []byte {
	b = append(b, `{"sourceRecordings":`...)
	b = appendList(b, v.SourceRecordings, func(b []byte, r *SourceRecording) []byte {
		b = append(b, `{"id":`...)
		b = appendString(b, r.ID)
		b = append(b, `,"title":`...)
		b = appendString(b, r.Title)
		b = append(b, `,"status":`...)
		b = appendString(b, r.Status)
		b = append(b, `,"clientCreatedAt":`...)
		b = r.ClientCreatedAt.appendJSON(b)
		b = append(b, `,"questions":`...)
		b = appendList(b, r.Questions, func(b []byte, q *Question) []byte {
			b = append(b, `{"id":`...)
			b = appendString(b, q.ID)
			b = append(b, `,"question":`...)
			b = appendString(b, q.Question)
			b = append(b, `,"response":`...)
			b = appendString(b, q.Response)
			b = append(b, `,"sequenceOrder":`...)
			b = strconv.AppendInt(b, int64(q.SequenceOrder), 10)
			return append(b, '}')
		})
		b = append(b, `,"steps":`...)
		b = appendStrings(b, r.Steps)
		b = append(b, '}')
		return b
	})
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(v.Total), 10)
	b = append(b, `,"linkedTotal":`...)
	b = strconv.AppendInt(b, int64(v.LinkedTotal), 10)
	b = append(b, `,"privateTotal":`...)
	b = strconv.AppendInt(b, int64(v.PrivateTotal), 10)
	b = append(b, `,"guidance":`...)
	b = appendString(b, v.Guidance)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(v.Page), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(v.PageSize), 10)
	return append(b, "}\n"...)
}

// AppendJSON implements Appender.
func (v *SearchResults) AppendJSON(b []byte) []byte {
	b = append(b, `{"documents":`...)
	b = appendList(b, v.Documents, func(b []byte, h *SearchHit) []byte {
		b = appendHead(append(b, '{'), h.ID, h.Title, h.Category, h.Tags, h.Applications)
		b = append(b, `,"content":`...)
		b = appendRaw(b, h.Content)
		b = append(b, `,"library":`...)
		b = h.Library.appendJSON(b)
		b = append(b, `,"edges":`...)
		b = h.Edges.appendJSON(b)
		b = append(b, `,"relevance":{"signals":`...)
		b = appendStrings(b, h.Relevance.Signals)
		b = append(b, `,"score":`...)
		b = appendFloat(b, h.Relevance.Score)
		b = append(b, `,"semanticSimilarity":`...)
		b = appendFloat(b, h.Relevance.SemanticSimilarity)
		b = append(b, "}}"...)
		return b
	})
	b = append(b, `,"schemas":`...)
	b = appendSchemas(b, v.Schemas)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(v.Total), 10)
	b = append(b, `,"matchedTotal":`...)
	b = strconv.AppendInt(b, int64(v.MatchedTotal), 10)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(v.Page), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(v.PageSize), 10)
	b = append(b, `,"facets":{"categories":`...)
	b = appendLabels(b, v.Facets.Categories)
	b = append(b, `,"tags":`...)
	b = appendLabels(b, v.Facets.Tags)
	b = append(b, `,"applications":`...)
	b = appendLabels(b, v.Facets.Applications)
	b = append(b, `,"libraries":`...)
	b = appendList(b, v.Facets.Libraries, func(b []byte, l *LibraryFacet) []byte {
		b = append(b, `{"id":`...)
		b = appendString(b, l.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, l.Name)
		b = append(b, `,"documentCount":`...)
		b = strconv.AppendInt(b, int64(l.DocumentCount), 10)
		b = append(b, '}')
		return b
	})
	b = append(b, `},"lowConfidence":`...)
	b = strconv.AppendBool(b, v.LowConfidence)
	if len(v.Guidance) > 0 {
		b = append(b, `,"guidance":`...)
		b = appendStrings(b, v.Guidance)
	}
	if len(v.UnavailableSignals) > 0 {
		b = append(b, `,"unavailableSignals":`...)
		b = appendStrings(b, v.UnavailableSignals)
	}
	return append(b, "}\n"...)
}

// appendList writes a list as encoding/json writes a slice: null when nil.
func appendList[T any](b []byte, items []T, each func([]byte, *T) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, &items[i])
	}
	return append(b, ']')
}

// appendHead writes the fields every document shape begins with.
func appendHead(b []byte, id, title, category string, tags, applications []string) []byte {
	b = append(b, `"id":`...)
	b = appendString(b, id)
	b = append(b, `,"title":`...)
	b = appendString(b, title)
	b = append(b, `,"category":`...)
	b = appendString(b, category)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, tags)
	b = append(b, `,"applications":`...)
	return appendStrings(b, applications)
}

func (t Time) appendJSON(b []byte) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.999999999Z07:00")
	return append(b, '"')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendFloat writes f as encoding/json does (ES6 number formatting).
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// encoding/json refuses these; a score is never one. Writing 0 keeps
		// the answer valid JSON should one slip through.
		return append(b, '0')
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendRaw writes a raw JSON value. A compact one (what the stores hold) is
// copied as it is; otherwise it is compacted as encoding/json compacts a
// json.RawMessage, and a value that is not JSON at all is written as null
// (encoding/json would fail the whole answer; the stores validate content on
// import, so this is only a guard).
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(b, "null"...)
	}
	if isCompact(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}

// isCompact reports whether raw has no white space outside its strings and
// no byte that encoding/json's compaction would change, a cheaper question
// than compacting: strings are skipped to their closing quote with
// bytes.IndexByte, which reads many bytes at a time. It does not validate:
// a value that is not JSON answers false only if it holds such white space.
func isCompact(raw []byte) bool {
	for i := 0; i < len(raw); {
		switch raw[i] {
		case '"':
			end := closingQuote(raw, i)
			if end < 0 {
				return false
			}
			i = end + 1
		case ' ', '\t', '\n', '\r':
			return false
		default:
			i++
		}
	}
	return len(raw) > 0
}

// closingQuote is the index of the quote that ends the string opening at
// raw[open], or -1: a quote preceded by an odd number of backslashes is
// escaped.
func closingQuote(raw []byte, open int) int {
	for j := open + 1; ; j++ {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p > open && raw[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
}

// safeSet marks the ASCII bytes encoding/json writes as they are when it
// does not escape HTML: every printable character but '"' and '\\'.
var safeSet = func() (s [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		s[c] = c != '"' && c != '\\'
	}
	return s
}()

const hexDigits = "0123456789abcdef"

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether the eight bytes of w are all written as they are:
// ASCII from 0x20, and neither '"' nor '\\'. Each test is the exact "has a
// byte less than n" / "has a zero byte" bit trick.
func plain8(w uint64) bool {
	ctl := (w - 0x20*lsb) &^ w
	q := w ^ ('"' * lsb)
	bs := w ^ ('\\' * lsb)
	return (w|ctl|(q-lsb)&^q|(bs-lsb)&^bs)&msb == 0
}

// appendString writes s as encoding/json writes a string without HTML
// escaping: \b \f \n \r \t and the other control characters escaped,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	// The string's bytes, read in place: one 64-bit load per eight bytes.
	raw := unsafe.Slice(unsafe.StringData(s), len(s))
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look of its own.
		for i+8 <= len(raw) && plain8(binary.LittleEndian.Uint64(raw[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if safeSet[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
