package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

// Data is a validated data set in domain form, with every derived value computed:
// documents' RecordingCount, libraries' counts and label lists, edges' titles and
// libraries, content in template order.
type Data struct {
	Workspaces []*doclib.Workspace
	Devices    []*doclib.Device
	APIKeys    []*doclib.APIKey
	Libraries  []*doclib.Library
	Documents  []*doclib.Document
	Edges      []*doclib.Edge
	Recordings []*doclib.Recording
}

// maxProblems bounds how many problems one rejection lists.
const maxProblems = 25

// ValidationError lists the problems that made a data set unacceptable. Each
// problem names the item, e.g. `documents[3] (doc_x): libraryId "lib_y" does not exist`.
type ValidationError struct {
	Problems []string
	// More counts problems found beyond those listed.
	More int
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	n := len(e.Problems) + e.More
	if n == 1 {
		b.WriteString("data set rejected, nothing was loaded: 1 problem")
	} else {
		fmt.Fprintf(&b, "data set rejected, nothing was loaded: %d problems", n)
	}
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.More)
	}
	return b.String()
}

// LoadFile reads and validates a data-set file.
func LoadFile(path string) (*Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	d, err := Load(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return d, nil
}

// Load reads and validates a data set. It returns a *ValidationError naming every
// problem (up to a bound) when the data set is not acceptable; nothing is returned
// then, so a caller cannot load half a file.
//
// The file is decoded as a stream, item by item, straight into the typed items:
// a 300 MB file is never held whole in memory, and an item with a wrong type or
// an unknown field is reported with its array, index and ID while the rest of the
// file is still checked.
func Load(r io.Reader) (*Data, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	v := &validator{}
	var f File
	if err := decodeFile(dec, v, &f); err != nil {
		return nil, &ValidationError{Problems: []string{"the file is not a data-set JSON object: " + jsonProblem(err)}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ValidationError{Problems: []string{"the file has data after its JSON object; it must hold exactly one object"}}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return Validate(&f)
}

// errNotObject is what a file that is JSON but not an object gets.
var errNotObject = errors.New(`the top level must be a JSON object such as {"workspaces": [...], "documents": [...]}`)

// decodeFile decodes the top-level object. Problems inside items go to v; the
// returned error is for a file whose structure cannot be read any further.
func decodeFile(dec *json.Decoder, v *validator, f *File) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errNotObject
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("the array %q is given twice; give each array once", key)
		}
		seen[key] = true
		switch key {
		case "workspaces":
			err = decodeArray(dec, v, key, &f.Workspaces)
		case "devices":
			err = decodeArray(dec, v, key, &f.Devices)
		case "apiKeys":
			err = decodeArray(dec, v, key, &f.APIKeys)
		case "libraries":
			err = decodeArray(dec, v, key, &f.Libraries)
		case "documents":
			err = decodeArray(dec, v, key, &f.Documents)
		case "edges":
			err = decodeArray(dec, v, key, &f.Edges)
		case "recordings":
			err = decodeArray(dec, v, key, &f.Recordings)
		default:
			return fmt.Errorf("json: unknown field %q", key)
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing '}'
	return err
}

// identified is an item whose ID can name it in a problem.
type identified interface{ itemID() string }

func (w Workspace) itemID() string { return w.ID }
func (d Device) itemID() string    { return d.ID }
func (k APIKey) itemID() string    { return k.ID }
func (l Library) itemID() string   { return l.ID }
func (d Document) itemID() string  { return d.ID }
func (e Edge) itemID() string      { return "" }
func (r Recording) itemID() string { return r.ID }

// decodeArray decodes one top-level array item by item. A type error or an
// unknown field in an item is that item's problem and decoding goes on (the
// decoder has read the whole item before it fails); a syntax error ends it.
func decodeArray[T identified](dec *json.Decoder, v *validator, name string, out *[]T) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil { // "documents": null is an empty array
		return nil
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("%q must be an array", name)
	}
	for i := 0; dec.More(); i++ {
		var item T
		if err := dec.Decode(&item); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return err
			}
			v.add(itemName(name, i, item.itemID()), "%s", jsonProblem(err))
		}
		*out = append(*out, item)
	}
	_, err = dec.Token() // the closing ']'
	return err
}

// jsonProblem rewords encoding/json's errors without the Go type names.
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ute):
		if ute.Field != "" {
			return fmt.Sprintf("field %q has the wrong type (a JSON %s where %s was expected)", ute.Field, ute.Value, jsonKind(ute.Type.Kind().String()))
		}
		return fmt.Sprintf("a JSON %s where %s was expected", ute.Value, jsonKind(ute.Type.Kind().String()))
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f + "; remove it or check its spelling against the data-set format"
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "int32":
		return "a whole number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

func itemName(array string, i int, id string) string {
	if id != "" {
		return fmt.Sprintf("%s[%d] (%s)", array, i, id)
	}
	return fmt.Sprintf("%s[%d]", array, i)
}

type validator struct {
	problems []string
	more     int

	// buf and enc are reused for every document's content, which is then copied
	// out at its exact size.
	buf bytes.Buffer
	enc *json.Encoder
}

func (v *validator) add(item, format string, args ...any) {
	if len(v.problems) >= maxProblems {
		v.more++
		return
	}
	v.problems = append(v.problems, item+": "+fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems, More: v.more}
}

var (
	slugRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	idREs  = map[string]*regexp.Regexp{}
)

// IDPattern is the shape of every identifier: its prefix and then 1 to 64 letters,
// digits, underscores or hyphens.
const IDPattern = `[A-Za-z0-9_-]{1,64}`

func init() {
	for _, p := range []string{"ws_", "dev_", "key_", "lib_", "doc_", "rec_", "ques_"} {
		idREs[p] = regexp.MustCompile("^" + p + IDPattern + "$")
	}
}

func (v *validator) id(item, field, prefix, id string) bool {
	if !idREs[prefix].MatchString(id) {
		v.add(item, "%s %q must be %q followed by 1 to 64 letters, digits, '_' or '-'", field, id, prefix)
		return false
	}
	return true
}

func (v *validator) text(item, field, s string) {
	if strings.TrimSpace(s) == "" {
		v.add(item, "%s must not be empty", field)
	}
}

func (v *validator) enum(item, field, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.add(item, "%s %q is not one of %s", field, s, strings.Join(quoteAll(allowed), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func (v *validator) time(item, field, s string) time.Time {
	if s == "" {
		v.add(item, "%s is missing; give an RFC 3339 timestamp such as 2026-11-21T09:30:00Z", field)
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		v.add(item, "%s %q is not an RFC 3339 timestamp such as 2026-11-21T09:30:00Z", field, s)
		return time.Time{}
	}
	return t.UTC()
}

func (v *validator) labels(item, field string, ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		switch {
		case strings.TrimSpace(s) == "":
			v.add(item, "%s holds an empty value", field)
		case seen[s]:
			v.add(item, "%s holds %q twice", field, s)
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (v *validator) nonNegative(item, field string, n int) {
	if n < 0 {
		v.add(item, "%s %d must not be negative", field, n)
	}
}

// Validate checks a decoded file as a whole and builds its domain form.
func Validate(f *File) (*Data, error) {
	v := &validator{}
	d := &Data{}

	workspaces := map[string]*doclib.Workspace{}
	for i, w := range f.Workspaces {
		item := itemName("workspaces", i, w.ID)
		if v.id(item, "id", "ws_", w.ID) && workspaces[w.ID] != nil {
			v.add(item, "id %q is used twice", w.ID)
		}
		v.text(item, "name", w.Name)
		v.enum(item, "plan", w.Plan, string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise))
		v.enum(item, "subscription", w.Subscription, doclib.SubscriptionActive, doclib.SubscriptionSuspended)
		if w.AICredit < 0 {
			v.add(item, "aiCredit %d must not be negative", w.AICredit)
		}
		ws := &doclib.Workspace{ID: w.ID, Name: w.Name, Plan: doclib.Plan(w.Plan), AICredit: w.AICredit,
			OwnProviderKey: w.OwnProviderKey, Subscription: w.Subscription}
		if workspaces[w.ID] == nil {
			workspaces[w.ID] = ws
		}
		d.Workspaces = append(d.Workspaces, ws)
	}

	devices := map[string]*doclib.Device{}
	for i, dv := range f.Devices {
		item := itemName("devices", i, dv.ID)
		if v.id(item, "id", "dev_", dv.ID) && devices[dv.ID] != nil {
			v.add(item, "id %q is used twice", dv.ID)
		}
		if workspaces[dv.WorkspaceID] == nil {
			v.add(item, "workspaceId %q does not exist in workspaces", dv.WorkspaceID)
		}
		v.enum(item, "status", dv.Status, doclib.DeviceActive, doclib.DeviceRemoved, doclib.DeviceArchived)
		dev := &doclib.Device{ID: dv.ID, WorkspaceID: dv.WorkspaceID, Status: dv.Status}
		if devices[dv.ID] == nil {
			devices[dv.ID] = dev
		}
		d.Devices = append(d.Devices, dev)
	}

	libraries := map[string]*doclib.Library{}
	slugOwner := map[string]string{} // workspace + "/" + slug -> library ID
	for i, l := range f.Libraries {
		item := itemName("libraries", i, l.ID)
		if v.id(item, "id", "lib_", l.ID) && libraries[l.ID] != nil {
			v.add(item, "id %q is used twice", l.ID)
		}
		if workspaces[l.WorkspaceID] == nil {
			v.add(item, "workspaceId %q does not exist in workspaces", l.WorkspaceID)
		}
		v.text(item, "name", l.Name)
		for j, s := range append([]string{l.Slug}, l.PreviousSlugs...) {
			field := "slug"
			if j > 0 {
				field = fmt.Sprintf("previousSlugs[%d]", j-1)
			}
			if !slugRE.MatchString(s) || len(s) > 100 {
				v.add(item, "%s %q must be 1 to 100 lowercase letters, digits and single hyphens, like \"it-operations\"", field, s)
				continue
			}
			k := l.WorkspaceID + "/" + s
			if owner, ok := slugOwner[k]; ok {
				if owner == l.ID {
					v.add(item, "%s %q is listed twice", field, s)
				} else {
					v.add(item, "%s %q is already a slug of library %s in the same workspace", field, s, owner)
				}
				continue
			}
			slugOwner[k] = l.ID
		}
		lib := &doclib.Library{ID: l.ID, WorkspaceID: l.WorkspaceID, Name: l.Name, Slug: l.Slug,
			PreviousSlugs: nonNil(l.PreviousSlugs), Description: l.Description,
			CreatedAt: v.time(item, "createdAt", l.CreatedAt), UpdatedAt: v.time(item, "updatedAt", l.UpdatedAt),
			Schema: v.schema(item, l.Schema)}
		if libraries[l.ID] == nil {
			libraries[l.ID] = lib
		}
		d.Libraries = append(d.Libraries, lib)
	}

	for i, k := range f.APIKeys {
		item := itemName("apiKeys", i, k.ID)
		v.id(item, "id", "key_", k.ID)
		if workspaces[k.WorkspaceID] == nil {
			v.add(item, "workspaceId %q does not exist in workspaces", k.WorkspaceID)
		}
		if dev := devices[k.DeviceID]; dev == nil {
			v.add(item, "deviceId %q does not exist in devices", k.DeviceID)
		} else if dev.WorkspaceID != k.WorkspaceID {
			v.add(item, "deviceId %q belongs to workspace %s, not %s", k.DeviceID, dev.WorkspaceID, k.WorkspaceID)
		}
		if len(k.Secret) < 16 || strings.ContainsAny(k.Secret, " \t\r\n") {
			v.add(item, "secret must be at least 16 characters with no white space")
		}
		key := &doclib.APIKey{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID,
			Hash: doclib.HashKey(k.Secret), RecordingDetails: k.RecordingDetails}
		switch {
		case len(k.Libraries) == 0:
			v.add(item, `libraries is empty; list library IDs or ["*"] for every library of the workspace`)
		case len(k.Libraries) == 1 && k.Libraries[0] == "*":
			key.AllLibraries = true
		default:
			seen := map[string]bool{}
			for _, id := range k.Libraries {
				lib := libraries[id]
				switch {
				case id == "*":
					v.add(item, `libraries mixes "*" with library IDs; use ["*"] alone for every library`)
				case seen[id]:
					v.add(item, "libraries lists %q twice", id)
				case lib == nil:
					v.add(item, "libraries lists %q, which does not exist in libraries", id)
				case lib.WorkspaceID != k.WorkspaceID:
					v.add(item, "libraries lists %q, which belongs to workspace %s, not %s", id, lib.WorkspaceID, k.WorkspaceID)
				}
				seen[id] = true
			}
			key.Libraries = append([]string(nil), k.Libraries...)
		}
		if k.ExpiresAt != "" {
			key.ExpiresAt = v.time(item, "expiresAt", k.ExpiresAt)
		}
		d.APIKeys = append(d.APIKeys, key)
	}
	keyIDs := map[string]string{}
	hashes := map[doclib.KeyHash]string{}
	for i, k := range d.APIKeys {
		item := itemName("apiKeys", i, k.ID)
		if _, ok := keyIDs[k.ID]; ok && k.ID != "" {
			v.add(item, "id %q is used twice", k.ID)
		}
		keyIDs[k.ID] = k.ID
		if other, ok := hashes[k.Hash]; ok {
			v.add(item, "secret is the same as the secret of key %s; every key needs its own", other)
		}
		hashes[k.Hash] = k.ID
	}

	documents := map[string]*doclib.Document{}
	docSlugs := map[string]string{} // library + "/" + slug -> document ID
	for i := range f.Documents {
		doc := &f.Documents[i]
		item := itemName("documents", i, doc.ID)
		if v.id(item, "id", "doc_", doc.ID) && documents[doc.ID] != nil {
			v.add(item, "id %q is used twice", doc.ID)
		}
		lib := libraries[doc.LibraryID]
		if lib == nil {
			v.add(item, "libraryId %q does not exist in libraries", doc.LibraryID)
		}
		if !slugRE.MatchString(doc.Slug) || len(doc.Slug) > 200 {
			v.add(item, "slug %q must be lowercase letters, digits and single hyphens, like \"reset-a-password\"", doc.Slug)
		} else if other, ok := docSlugs[doc.LibraryID+"/"+doc.Slug]; ok {
			v.add(item, "slug %q is already used by %s in the same library", doc.Slug, other)
		} else {
			docSlugs[doc.LibraryID+"/"+doc.Slug] = doc.ID
		}
		v.text(item, "title", doc.Title)
		v.text(item, "category", doc.Category)
		v.nonNegative(item, "deviceCount", doc.DeviceCount)
		out := &doclib.Document{ID: doc.ID, LibraryID: doc.LibraryID, Slug: doc.Slug, Title: doc.Title,
			Category: doc.Category, Tags: v.labels(item, "tags", doc.Tags),
			Applications: v.labels(item, "applications", doc.Applications), DeviceCount: doc.DeviceCount,
			FirstSeen: v.time(item, "firstSeen", doc.FirstSeen), LastSeen: v.time(item, "lastSeen", doc.LastSeen),
			CreatedAt: v.time(item, "createdAt", doc.CreatedAt), UpdatedAt: v.time(item, "updatedAt", doc.UpdatedAt)}
		if out.LastSeen.Before(out.FirstSeen) {
			v.add(item, "lastSeen %s is before firstSeen %s", doc.LastSeen, doc.FirstSeen)
		}
		if out.UpdatedAt.Before(out.CreatedAt) {
			v.add(item, "updatedAt %s is before createdAt %s", doc.UpdatedAt, doc.CreatedAt)
		}
		if lib != nil {
			out.WorkspaceID = lib.WorkspaceID
			out.Content = v.content(item, lib, doc.Content)
		}
		if documents[doc.ID] == nil {
			documents[doc.ID] = out
		}
		d.Documents = append(d.Documents, out)
	}

	type edgeKey struct{ s, t, l string }
	seenEdges := map[edgeKey]int{}
	for i, e := range f.Edges {
		item := fmt.Sprintf("edges[%d] (%s -> %s)", i, e.SourceDocumentID, e.TargetDocumentID)
		src, dst := documents[e.SourceDocumentID], documents[e.TargetDocumentID]
		if src == nil {
			v.add(item, "sourceDocumentId %q does not exist in documents", e.SourceDocumentID)
		}
		if dst == nil {
			v.add(item, "targetDocumentId %q does not exist in documents", e.TargetDocumentID)
		}
		if e.SourceDocumentID == e.TargetDocumentID {
			v.add(item, "an edge cannot link a document to itself")
		}
		if src != nil && dst != nil && src.WorkspaceID != dst.WorkspaceID {
			v.add(item, "the documents belong to different workspaces (%s and %s); edges stay within one workspace", src.WorkspaceID, dst.WorkspaceID)
		}
		v.text(item, "label", e.Label)
		v.enum(item, "edgeType", e.EdgeType, doclib.EdgeData, doclib.EdgeSemantic)
		v.nonNegative(item, "recordingCount", e.RecordingCount)
		v.nonNegative(item, "support", e.Support)
		k := edgeKey{e.SourceDocumentID, e.TargetDocumentID, e.Label}
		if j, ok := seenEdges[k]; ok {
			v.add(item, "the same edge (same source, target and label) is already edges[%d]", j)
		}
		seenEdges[k] = i
		if src == nil || dst == nil {
			continue
		}
		d.Edges = append(d.Edges, &doclib.Edge{SourceID: src.ID, SourceTitle: src.Title, SourceLibraryID: src.LibraryID,
			TargetID: dst.ID, TargetTitle: dst.Title, TargetLibraryID: dst.LibraryID, Label: e.Label, Type: e.EdgeType,
			RecordingCount: e.RecordingCount, Support: e.Support})
	}

	recIDs := map[string]bool{}
	quesIDs := map[string]string{}
	for i, r := range f.Recordings {
		item := itemName("recordings", i, r.ID)
		if v.id(item, "id", "rec_", r.ID) && recIDs[r.ID] {
			v.add(item, "id %q is used twice", r.ID)
		}
		recIDs[r.ID] = true
		v.text(item, "title", r.Title)
		v.enum(item, "status", r.Status, RecordingStatuses...)
		if len(r.DocumentIDs) == 0 {
			v.add(item, "documentIds is empty; a recording is linked to at least one document")
		}
		ws := ""
		seen := map[string]bool{}
		for _, id := range r.DocumentIDs {
			doc := documents[id]
			switch {
			case doc == nil:
				v.add(item, "documentIds lists %q, which does not exist in documents", id)
			case seen[id]:
				v.add(item, "documentIds lists %q twice", id)
			case ws != "" && doc.WorkspaceID != ws:
				v.add(item, "documentIds mixes workspaces (%s and %s); a recording belongs to one workspace", ws, doc.WorkspaceID)
			default:
				ws = doc.WorkspaceID
				doc.RecordingCount++
				if r.Shared {
					doc.SharedRecordingCount++
				}
			}
			seen[id] = true
		}
		rec := &doclib.Recording{ID: r.ID, DocumentIDs: append([]string(nil), r.DocumentIDs...), Title: r.Title,
			Status: r.Status, Shared: r.Shared, ClientCreatedAt: v.time(item, "clientCreatedAt", r.ClientCreatedAt),
			Steps: nonNil(r.Steps)}
		orders := map[int]bool{}
		for j, q := range r.Questions {
			qitem := fmt.Sprintf("%s questions[%d]", item, j)
			if v.id(qitem, "id", "ques_", q.ID) {
				if other, ok := quesIDs[q.ID]; ok {
					v.add(qitem, "id %q is already used in %s", q.ID, other)
				}
				quesIDs[q.ID] = r.ID
			}
			v.text(qitem, "question", q.Question)
			if q.SequenceOrder < 1 {
				v.add(qitem, "sequenceOrder %d must be 1 or more", q.SequenceOrder)
			} else if orders[q.SequenceOrder] {
				v.add(qitem, "sequenceOrder %d is used twice in this recording", q.SequenceOrder)
			}
			orders[q.SequenceOrder] = true
			rec.Questions = append(rec.Questions, doclib.Question{ID: q.ID, Question: q.Question, Response: q.Response, SequenceOrder: q.SequenceOrder})
		}
		sort.SliceStable(rec.Questions, func(a, b int) bool { return rec.Questions[a].SequenceOrder < rec.Questions[b].SequenceOrder })
		if rec.Questions == nil {
			rec.Questions = []doclib.Question{}
		}
		d.Recordings = append(d.Recordings, rec)
	}

	if err := v.err(); err != nil {
		return nil, err
	}
	derive(d, libraries)
	return d, nil
}

// RecordingStatuses are the values a recording's status may take.
var RecordingStatuses = []string{"processing", "processed", "failed"}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return append([]string(nil), ss...)
}

func (v *validator) schema(item string, s Schema) doclib.Schema {
	if s.Version < 1 {
		v.add(item, "schema.version %d must be 1 or more", s.Version)
	}
	if len(s.Sections) == 0 {
		v.add(item, "schema.sections is empty; a template has at least one section")
	}
	out := doclib.Schema{Version: s.Version}
	keys := map[string]bool{}
	for j, sec := range s.Sections {
		field := fmt.Sprintf("schema.sections[%d]", j)
		if !sectionKeyRE.MatchString(sec.Key) {
			v.add(item, "%s.key %q must be a camelCase name such as \"summary\" or \"knownIssues\"", field, sec.Key)
		} else if keys[sec.Key] {
			v.add(item, "%s.key %q is used twice", field, sec.Key)
		}
		keys[sec.Key] = true
		v.text(item, field+".title", sec.Title)
		v.enum(item, field+".type", sec.Type, doclib.SectionText, doclib.SectionSteps, doclib.SectionList)
		out.Sections = append(out.Sections, doclib.Section{Key: sec.Key, Title: sec.Title, Type: sec.Type})
	}
	if out.Sections == nil {
		out.Sections = []doclib.Section{}
	}
	return out
}

var sectionKeyRE = regexp.MustCompile(`^[a-z][A-Za-z0-9]{0,63}$`)

// content checks a document's content against its library's template and returns
// it as compact JSON in the template's order.
func (v *validator) content(item string, lib *doclib.Library, content map[string]any) json.RawMessage {
	types := make(map[string]string, len(lib.Schema.Sections))
	for _, s := range lib.Schema.Sections {
		types[s.Key] = s.Type
	}
	var unknown []string
	for k := range content {
		if _, ok := types[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		v.add(item, "content has section %q, which the template of %s (version %d) does not have", k, lib.ID, lib.Schema.Version)
	}
	if v.enc == nil {
		v.enc = json.NewEncoder(&v.buf)
		v.enc.SetEscapeHTML(false)
	}
	b := &v.buf
	b.Reset()
	b.WriteByte('{')
	first := true
	for _, s := range lib.Schema.Sections {
		val, ok := content[s.Key]
		if !ok {
			continue
		}
		switch s.Type {
		case doclib.SectionText:
			if _, isString := val.(string); !isString {
				v.add(item, "content.%s must be a string (section type %q)", s.Key, s.Type)
				continue
			}
		default:
			arr, isArray := val.([]any)
			okItems := isArray
			for _, x := range arr {
				if _, isString := x.(string); !isString {
					okItems = false
				}
			}
			if !okItems {
				v.add(item, "content.%s must be an array of strings (section type %q)", s.Key, s.Type)
				continue
			}
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		v.writeJSON(s.Key)
		b.WriteByte(':')
		v.writeJSON(val)
	}
	b.WriteByte('}')
	return bytes.Clone(b.Bytes())
}

// writeJSON appends x to v.buf without HTML escaping, so that "Directory > People"
// stays readable in responses instead of becoming "Directory \u003e People".
func (v *validator) writeJSON(x any) {
	_ = v.enc.Encode(x)             // strings and arrays of strings always encode
	v.buf.Truncate(v.buf.Len() - 1) // Encode ends with a newline
}

// derive computes the values that are stored, never imported: label lists and
// counts per library, edge counts.
func derive(d *Data, libraries map[string]*doclib.Library) {
	type counts struct{ cat, tag, app map[string]int }
	per := map[string]*counts{}
	for _, l := range d.Libraries {
		per[l.ID] = &counts{map[string]int{}, map[string]int{}, map[string]int{}}
	}
	for _, doc := range d.Documents {
		c := per[doc.LibraryID]
		libraries[doc.LibraryID].DocumentCount++
		c.cat[doc.Category]++
		for _, t := range doc.Tags {
			c.tag[t]++
		}
		for _, a := range doc.Applications {
			c.app[a]++
		}
	}
	for _, e := range d.Edges {
		if e.SourceLibraryID == e.TargetLibraryID {
			libraries[e.SourceLibraryID].EdgeCount++
		}
	}
	for _, l := range d.Libraries {
		c := per[l.ID]
		l.Categories, l.Tags, l.Applications = labelList(c.cat), labelList(c.tag), labelList(c.app)
	}
}

// labelList orders labels by name, so that lists are stable and easy to scan.
func labelList(m map[string]int) []doclib.Label {
	out := make([]doclib.Label, 0, len(m))
	for name, n := range m {
		out = append(out, doclib.Label{Name: name, DocumentCount: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
