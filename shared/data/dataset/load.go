package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	doclib "github.com/doclib/doclib/shared"
)

// maxProblems bounds how many problems one rejection lists.
const maxProblems = 25

// ValidationError lists the problems that made a data set unacceptable,
// whole: the root's DataSetError, which the DynamoDB import returns too.
type ValidationError = doclib.DataSetError

// LoadFile reads and validates a data-set file.
func LoadFile(path string) (*doclib.DataSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder: give the data-set file itself (a JSON file, docs/dataset.md)", path)
	}
	d, err := Load(f) // Load buffers
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return d, nil
}

// Load reads and validates a data set. It returns a *ValidationError naming every
// problem (up to a bound) when the data set is not acceptable; nothing is returned
// then, so a caller cannot load half a file.
//
// The file is decoded as a stream, item by item, straight into the typed items
// (decode.go): a 300 MB file is never held whole in memory, and an item with a
// wrong type or an unknown field is reported with its array, index and ID while
// the rest of the file is still checked.
func Load(r io.Reader) (*doclib.DataSet, error) {
	v := &validator{}
	var f File
	if fatal := decodeFile(r, v, &f); fatal != "" {
		v.problems = append(v.problems, fatal) // listed even past maxProblems: it is why reading stopped
		return nil, v.err()
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return Validate(&f)
}

// errNotObject is what a file that is JSON but not an object gets.
var errNotObject = errors.New(`the top level must be a JSON object such as {"workspaces": [...], "documents": [...]}`)

// identified is an item whose ID can name it in a problem.
type identified interface{ shownID() string }

func (w Workspace) shownID() string { return shown(w.ID) }
func (d Device) shownID() string    { return shown(d.ID) }
func (k APIKey) shownID() string    { return shown(k.ID) }
func (l Library) shownID() string   { return shown(l.ID) }
func (d Document) shownID() string  { return shown(d.ID) }
func (r Recording) shownID() string { return shown(r.ID) }

// An edge has no ID: its documents name it.
func (e Edge) shownID() string {
	if e.SourceDocumentID == "" && e.TargetDocumentID == "" {
		return ""
	}
	return shown(e.SourceDocumentID) + " -> " + shown(e.TargetDocumentID)
}

// itemName names an item in a problem, e.g. "documents[3] (doc_x)"; id is as
// shown returns it.
func itemName(array string, i int, id string) string {
	if id != "" {
		return fmt.Sprintf("%s[%d] (%s)", array, i, id)
	}
	return fmt.Sprintf("%s[%d]", array, i)
}

// shown is an ID as a message shows it: as it is when it reads plainly, else
// quoted and clipped, so that a 5 MB or binary "ID" cannot bury the message.
func shown(id string) string {
	if len(id) <= 80 && utf8.ValidString(id) && strings.IndexFunc(id, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) < 0 {
		return id
	}
	return clipQuote(id)
}

// clipChars is how much of a value a message echoes: a 400-digit number or a
// 2 MB summary in full would bury the message.
const clipChars = 40

// clip shortens s to clipChars characters, saying how long it was.
func clip(s string) string {
	head, n := clipHead(s)
	if n <= clipChars {
		return s
	}
	return fmt.Sprintf("%s… (%s characters)", head, count(n))
}

// clipQuote is clip for a value shown quoted.
func clipQuote(s string) string {
	head, n := clipHead(s)
	if n <= clipChars {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%s characters)", strconv.Quote(head), count(n))
}

func clipHead(s string) (head string, chars int) {
	if len(s) <= clipChars {
		return s, utf8.RuneCountInString(s)
	}
	cut := 0
	for range clipChars {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut], utf8.RuneCountInString(s)
}

// count writes n with thousands separators: 2,000,000 reads at a glance.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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

// addTop records a problem of the file's top level, which no item owns.
func (v *validator) addTop(problem string) {
	if len(v.problems) >= maxProblems {
		v.more++
		return
	}
	v.problems = append(v.problems, problem)
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
		v.add(item, "%s %s must be %q followed by 1 to 64 letters, digits, '_' or '-'", field, clipQuote(id), prefix)
		return false
	}
	return true
}

// text checks a value that must say something, of at most max characters.
func (v *validator) text(item, field, s string, max int) {
	if strings.TrimSpace(s) == "" {
		v.add(item, "%s must not be empty", field)
		return
	}
	v.maxChars(item, field, s, max)
}

// maxChars checks the length of s in characters (not bytes: "é" is one).
func (v *validator) maxChars(item, field, s string, max int) bool {
	if len(s) <= max { // never more characters than bytes
		return true
	}
	if n := utf8.RuneCountInString(s); n > max {
		v.add(item, "%s is %s characters long; at most %s are allowed", field, count(n), count(max))
		return false
	}
	return true
}

func (v *validator) enum(item, field, s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	v.add(item, "%s %s is not one of %s", field, clipQuote(s), strings.Join(quoteAll(allowed), ", "))
	return false
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// timeForm is how messages and docs/dataset.md describe the one timestamp form
// the format takes: RFC 3339 as time.Parse reads it, which refuses a leap second
// and a lower-case t or z, so the message says what is accepted rather than
// naming a standard that allows more.
const timeForm = "a timestamp of the form 2026-11-21T09:30:00Z (or with an offset such as +02:00 instead of Z)"

// time parses a timestamp; ok is false, and a problem recorded, when s is not one.
func (v *validator) time(item, field, s string) (t time.Time, ok bool) {
	if s == "" {
		v.add(item, "%s is missing; give %s", field, timeForm)
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || !offsetOK(s) {
		v.add(item, "%s %s is not %s", field, clipQuote(s), timeForm)
		return time.Time{}, false
	}
	return t.UTC(), true
}

// offsetOK refuses the offsets time.Parse lets through that no clock has, such
// as +24:00.
func offsetOK(s string) bool {
	if s[len(s)-1] == 'Z' {
		return true
	}
	o := s[len(s)-6:] // time.Parse saw "+hh:mm"
	return o[1:3] <= "23" && o[4:6] <= "59"
}

// ordered checks that a later timestamp is not before an earlier one, when both
// parsed: a missing or malformed one is already a problem.
func (v *validator) ordered(item, earlyField, early string, e time.Time, eok bool, lateField, late string, l time.Time, lok bool) {
	if eok && lok && l.Before(e) {
		v.add(item, "%s %s is before %s %s", lateField, late, earlyField, early)
	}
}

// labels checks a document's tags or applications and returns them as a list
// that is never nil.
func (v *validator) labels(item, field string, ss []string) []string {
	if len(ss) > maxLabelsPerDocument {
		v.add(item, "%s has %d values; at most %d are allowed", field, len(ss), maxLabelsPerDocument)
	}
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	long := false
	for _, s := range ss {
		switch {
		case strings.TrimSpace(s) == "":
			v.add(item, "%s holds an empty value", field)
		case seen[s]:
			v.add(item, "%s holds %s twice", field, clipQuote(s))
		default:
			seen[s] = true
			out = append(out, s)
			if !long && len(s) > maxLabelChars && utf8.RuneCountInString(s) > maxLabelChars {
				long = true // once per field: one value or fifty, the fix is the same
				v.add(item, "%s holds %s, of %s characters; at most %d are allowed", field, clipQuote(s), count(utf8.RuneCountInString(s)), maxLabelChars)
			}
		}
	}
	return out
}

func (v *validator) nonNegative(item, field string, n int) {
	if n < 0 {
		v.add(item, "%s %d must not be negative", field, n)
	}
}

// Validate checks a decoded file as a whole and builds the domain's DataSet.
// Each kind of item is checked in turn, in the file's order of reference: a
// kind refers only to kinds checked before it.
//
// A problem that follows from another (a document of a missing library has no
// workspace, a template with two sections of one key cannot check content) is not
// reported: the message would point at the wrong fix.
func Validate(f *File) (*doclib.DataSet, error) {
	v := &validator{}
	r := &refs{
		workspaces: map[string]*doclib.Workspace{},
		devices:    map[string]*doclib.Device{},
		libraries:  map[string]*doclib.Library{},
		schemaOK:   map[string]bool{},
		documents:  map[string]*doclib.Document{},
	}
	d := &doclib.DataSet{}
	d.Workspaces = v.workspaces(f.Workspaces, r)
	d.Devices = v.devices(f.Devices, r)
	d.Libraries = v.libraries(f.Libraries, r)
	d.APIKeys = v.apiKeys(f.APIKeys, r)
	d.Documents = v.documents(f.Documents, r)
	d.Edges = v.edges(f.Edges, r)
	d.Recordings = v.recordings(f.Recordings, r)
	if err := v.err(); err != nil {
		return nil, err
	}
	derive(d, r.libraries)
	v.libraryLabels(d.Libraries)
	if err := v.err(); err != nil {
		return nil, err
	}
	return d, nil
}

// refs are the items checked so far, by ID, for later kinds to refer to. The
// first item of an ID is the one referred to; a later one is a problem.
type refs struct {
	workspaces map[string]*doclib.Workspace
	devices    map[string]*doclib.Device
	libraries  map[string]*doclib.Library
	schemaOK   map[string]bool // libraries whose template can check content
	documents  map[string]*doclib.Document
}

// differ tells whether two workspaces are different ones, which only counts
// when both exist: a missing one is a problem of its own.
func (r *refs) differ(a, b string) bool {
	return a != b && r.workspaces[a] != nil && r.workspaces[b] != nil
}

func (v *validator) workspaces(in []Workspace, r *refs) []*doclib.Workspace {
	out := make([]*doclib.Workspace, 0, len(in))
	for i, w := range in {
		item := itemName("workspaces", i, w.shownID())
		if v.id(item, "id", "ws_", w.ID) && r.workspaces[w.ID] != nil {
			v.add(item, "id %q is used twice", w.ID)
		}
		v.text(item, "name", w.Name, maxNameChars)
		v.enum(item, "plan", w.Plan, string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise))
		v.enum(item, "subscription", w.Subscription, doclib.SubscriptionActive, doclib.SubscriptionSuspended)
		if w.AICredit < 0 {
			v.add(item, "aiCredit %d must not be negative", w.AICredit)
		}
		ws := &doclib.Workspace{ID: w.ID, Name: w.Name, Plan: doclib.Plan(w.Plan), AICredit: w.AICredit,
			OwnProviderKey: w.OwnProviderKey, Subscription: w.Subscription}
		if r.workspaces[w.ID] == nil {
			r.workspaces[w.ID] = ws
		}
		out = append(out, ws)
	}
	return out
}

func (v *validator) devices(in []Device, r *refs) []*doclib.Device {
	out := make([]*doclib.Device, 0, len(in))
	for i, dv := range in {
		item := itemName("devices", i, dv.shownID())
		if v.id(item, "id", "dev_", dv.ID) && r.devices[dv.ID] != nil {
			v.add(item, "id %q is used twice", dv.ID)
		}
		if r.workspaces[dv.WorkspaceID] == nil {
			v.add(item, "workspaceId %s does not exist in workspaces", clipQuote(dv.WorkspaceID))
		}
		v.enum(item, "status", dv.Status, doclib.DeviceActive, doclib.DeviceRemoved, doclib.DeviceArchived)
		dev := &doclib.Device{ID: dv.ID, WorkspaceID: dv.WorkspaceID, Status: dv.Status}
		if r.devices[dv.ID] == nil {
			r.devices[dv.ID] = dev
		}
		out = append(out, dev)
	}
	return out
}

func (v *validator) libraries(in []Library, r *refs) []*doclib.Library {
	out := make([]*doclib.Library, 0, len(in))
	slugOwner := map[string]string{} // workspace + "/" + slug -> library ID
	for i, l := range in {
		item := itemName("libraries", i, l.shownID())
		if v.id(item, "id", "lib_", l.ID) && r.libraries[l.ID] != nil {
			v.add(item, "id %q is used twice", l.ID)
		}
		if r.workspaces[l.WorkspaceID] == nil {
			v.add(item, "workspaceId %s does not exist in workspaces", clipQuote(l.WorkspaceID))
		}
		v.text(item, "name", l.Name, maxNameChars)
		v.maxChars(item, "description", l.Description, maxDescriptionChars)
		v.librarySlugs(item, l, slugOwner)
		created, cok := v.time(item, "createdAt", l.CreatedAt)
		updated, uok := v.time(item, "updatedAt", l.UpdatedAt)
		v.ordered(item, "createdAt", l.CreatedAt, created, cok, "updatedAt", l.UpdatedAt, updated, uok)
		schema, ok := v.schema(item, l.Schema)
		lib := &doclib.Library{ID: l.ID, WorkspaceID: l.WorkspaceID, Name: l.Name, Slug: l.Slug,
			PreviousSlugs: nonNil(l.PreviousSlugs), Description: l.Description,
			CreatedAt: created, UpdatedAt: updated, Schema: schema}
		if r.libraries[l.ID] == nil {
			r.libraries[l.ID] = lib
			r.schemaOK[l.ID] = ok
		}
		out = append(out, lib)
	}
	return out
}

// librarySlugs checks a library's slug and earlier slugs, which must be unique
// within its workspace: any of them resolves to the library.
func (v *validator) librarySlugs(item string, l Library, slugOwner map[string]string) {
	if len(l.PreviousSlugs) > maxPreviousSlugs {
		v.add(item, "previousSlugs has %d slugs; at most %d are allowed", len(l.PreviousSlugs), maxPreviousSlugs)
	}
	for j, s := range append([]string{l.Slug}, l.PreviousSlugs...) {
		field := "slug"
		if j > 0 {
			field = fmt.Sprintf("previousSlugs[%d]", j-1)
		}
		if !slugRE.MatchString(s) || len(s) > 100 {
			v.add(item, "%s %s must be 1 to 100 lowercase letters, digits and single hyphens, like \"it-operations\"", field, clipQuote(s))
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
}

func (v *validator) apiKeys(in []APIKey, r *refs) []*doclib.APIKey {
	out := make([]*doclib.APIKey, 0, len(in))
	for i, k := range in {
		item := itemName("apiKeys", i, k.shownID())
		v.id(item, "id", "key_", k.ID)
		if r.workspaces[k.WorkspaceID] == nil {
			v.add(item, "workspaceId %s does not exist in workspaces", clipQuote(k.WorkspaceID))
		}
		if dev := r.devices[k.DeviceID]; dev == nil {
			v.add(item, "deviceId %s does not exist in devices", clipQuote(k.DeviceID))
		} else if r.differ(dev.WorkspaceID, k.WorkspaceID) {
			v.add(item, "deviceId %q belongs to workspace %s, not %s", k.DeviceID, dev.WorkspaceID, k.WorkspaceID)
		}
		// Characters, not bytes, as the format says; and any white space, not only ASCII's.
		if n := utf8.RuneCountInString(k.Secret); n < 16 {
			v.add(item, "secret must be at least 16 characters with no white space; it has %d", n)
		} else if j := strings.IndexFunc(k.Secret, unicode.IsSpace); j >= 0 {
			ch, _ := utf8.DecodeRuneInString(k.Secret[j:])
			v.add(item, "secret must be at least 16 characters with no white space; it holds %U", ch)
		}
		key := &doclib.APIKey{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID,
			Hash: doclib.HashKey(k.Secret), RecordingDetails: k.RecordingDetails}
		v.keyScope(item, k, key, r)
		if k.ExpiresAt != "" {
			key.ExpiresAt, _ = v.time(item, "expiresAt", k.ExpiresAt)
		}
		out = append(out, key)
	}
	v.uniqueKeys(out)
	return out
}

// keyScope checks a key's libraries and sets its scope: ["*"] alone for every
// library of the workspace, or library IDs of that workspace.
func (v *validator) keyScope(item string, k APIKey, key *doclib.APIKey, r *refs) {
	stars := 0
	for _, id := range k.Libraries {
		if id == "*" {
			stars++
		}
	}
	switch {
	case len(k.Libraries) == 0:
		v.add(item, `libraries is empty; list library IDs or ["*"] for every library of the workspace`)
	case stars == len(k.Libraries) && stars > 1:
		v.add(item, `libraries lists "*" %d times; use ["*"] alone for every library`, stars)
	case stars == 1 && len(k.Libraries) == 1:
		key.AllLibraries = true // Libraries stays nil: it is never served, and means nothing then
	case len(k.Libraries) > maxKeyLibraries:
		v.add(item, "libraries lists %d libraries; at most %d are allowed (use [\"*\"] for every library of the workspace)", len(k.Libraries), maxKeyLibraries)
	default:
		if stars > 0 {
			v.add(item, `libraries mixes "*" with library IDs; use ["*"] alone for every library`)
		}
		seen := map[string]bool{}
		for _, id := range k.Libraries {
			lib := r.libraries[id]
			switch {
			case id == "*":
			case seen[id]:
				v.add(item, "libraries lists %s twice", clipQuote(id))
			case lib == nil:
				v.add(item, "libraries lists %s, which does not exist in libraries", clipQuote(id))
			case r.differ(lib.WorkspaceID, k.WorkspaceID):
				v.add(item, "libraries lists %q, which belongs to workspace %s, not %s", id, lib.WorkspaceID, k.WorkspaceID)
			}
			seen[id] = true
		}
		key.Libraries = nonNil(k.Libraries)
	}
}

// uniqueKeys checks, once every key is read, that no two share an ID or a
// secret: a key is found by its secret's hash.
func (v *validator) uniqueKeys(keys []*doclib.APIKey) {
	keyIDs := map[string]string{}
	hashes := map[doclib.KeyHash]string{}
	for i, k := range keys {
		item := itemName("apiKeys", i, shown(k.ID))
		if _, ok := keyIDs[k.ID]; ok && k.ID != "" {
			v.add(item, "id %q is used twice", k.ID)
		}
		keyIDs[k.ID] = k.ID
		if other, ok := hashes[k.Hash]; ok {
			v.add(item, "secret is the same as the secret of key %s; every key needs its own", other)
		}
		hashes[k.Hash] = k.ID
	}
}

func (v *validator) documents(in []Document, r *refs) []*doclib.Document {
	out := make([]*doclib.Document, 0, len(in))
	docSlugs := map[string]string{} // library + "/" + slug -> document ID
	for i := range in {
		doc := &in[i]
		item := itemName("documents", i, doc.shownID())
		if v.id(item, "id", "doc_", doc.ID) && r.documents[doc.ID] != nil {
			v.add(item, "id %q is used twice", doc.ID)
		}
		lib := r.libraries[doc.LibraryID]
		if lib == nil {
			v.add(item, "libraryId %s does not exist in libraries", clipQuote(doc.LibraryID))
		}
		if !slugRE.MatchString(doc.Slug) || len(doc.Slug) > 200 {
			v.add(item, "slug %s must be 1 to 200 lowercase letters, digits and single hyphens, like \"reset-a-password\"", clipQuote(doc.Slug))
		} else if other, ok := docSlugs[doc.LibraryID+"/"+doc.Slug]; ok {
			v.add(item, "slug %q is already used by %s in the same library", doc.Slug, other)
		} else {
			docSlugs[doc.LibraryID+"/"+doc.Slug] = doc.ID
		}
		v.text(item, "title", doc.Title, maxTitleChars)
		v.text(item, "category", doc.Category, maxLabelChars)
		v.nonNegative(item, "deviceCount", doc.DeviceCount)
		d := &doclib.Document{ID: doc.ID, LibraryID: doc.LibraryID, Slug: doc.Slug, Title: doc.Title,
			Category: doc.Category, Tags: v.labels(item, "tags", doc.Tags),
			Applications: v.labels(item, "applications", doc.Applications), DeviceCount: doc.DeviceCount}
		var fok, lok, cok, uok bool
		d.FirstSeen, fok = v.time(item, "firstSeen", doc.FirstSeen)
		d.LastSeen, lok = v.time(item, "lastSeen", doc.LastSeen)
		d.CreatedAt, cok = v.time(item, "createdAt", doc.CreatedAt)
		d.UpdatedAt, uok = v.time(item, "updatedAt", doc.UpdatedAt)
		v.ordered(item, "firstSeen", doc.FirstSeen, d.FirstSeen, fok, "lastSeen", doc.LastSeen, d.LastSeen, lok)
		v.ordered(item, "createdAt", doc.CreatedAt, d.CreatedAt, cok, "updatedAt", doc.UpdatedAt, d.UpdatedAt, uok)
		if lib != nil {
			d.WorkspaceID = lib.WorkspaceID
			if r.schemaOK[lib.ID] {
				d.Content = v.content(item, lib, doc.Content)
			}
		}
		if r.documents[doc.ID] == nil {
			r.documents[doc.ID] = d
		}
		out = append(out, d)
	}
	return out
}

// edges checks the edges and returns those whose two documents exist, with
// the documents' titles and libraries.
func (v *validator) edges(in []Edge, r *refs) []*doclib.Edge {
	out := make([]*doclib.Edge, 0, len(in))
	type edgeKey struct{ s, t, l string }
	seenEdges := map[edgeKey]int{}
	for i, e := range in {
		item := itemName("edges", i, e.shownID())
		src, dst := r.documents[e.SourceDocumentID], r.documents[e.TargetDocumentID]
		if src == nil {
			v.add(item, "sourceDocumentId %s does not exist in documents", clipQuote(e.SourceDocumentID))
		}
		if dst == nil {
			v.add(item, "targetDocumentId %s does not exist in documents", clipQuote(e.TargetDocumentID))
		}
		if e.SourceDocumentID == e.TargetDocumentID {
			v.add(item, "an edge cannot link a document to itself")
		}
		if src != nil && dst != nil && r.differ(src.WorkspaceID, dst.WorkspaceID) {
			v.add(item, "the documents belong to different workspaces (%s and %s); edges stay within one workspace", src.WorkspaceID, dst.WorkspaceID)
		}
		v.text(item, "label", e.Label, maxLabelChars)
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
		out = append(out, &doclib.Edge{SourceID: src.ID, SourceTitle: src.Title, SourceLibraryID: src.LibraryID,
			TargetID: dst.ID, TargetTitle: dst.Title, TargetLibraryID: dst.LibraryID, Label: e.Label, Type: e.EdgeType,
			RecordingCount: e.RecordingCount, Support: e.Support})
	}
	return out
}

// recordings checks the recordings and counts, on each document they list, the
// recordings behind it.
func (v *validator) recordings(in []Recording, r *refs) []*doclib.Recording {
	out := make([]*doclib.Recording, 0, len(in))
	recIDs := map[string]bool{}
	quesIDs := map[string]string{} // question ID -> recording ID
	for i, rc := range in {
		item := itemName("recordings", i, rc.shownID())
		if v.id(item, "id", "rec_", rc.ID) && recIDs[rc.ID] {
			v.add(item, "id %q is used twice", rc.ID)
		}
		recIDs[rc.ID] = true
		v.text(item, "title", rc.Title, maxTitleChars)
		v.enum(item, "status", rc.Status, RecordingStatuses...)
		switch n := len(rc.DocumentIDs); {
		case n == 0:
			v.add(item, "documentIds is empty; a recording is linked to at least one document")
		case n > maxRecordingDocuments:
			v.add(item, "documentIds lists %d documents; at most %d are allowed", n, maxRecordingDocuments)
		}
		if n := recordingBytes(rc); n > maxRecordingBytes {
			v.add(item, "questions and steps are %s bytes written as JSON; at most %s are allowed, so that the recording fits a DynamoDB item (400 KB)", count(n), count(maxRecordingBytes))
		}
		v.recordingDocuments(item, rc, r)
		rec := &doclib.Recording{ID: rc.ID, DocumentIDs: nonNil(rc.DocumentIDs), Title: rc.Title,
			Status: rc.Status, Shared: rc.Shared, Steps: nonNil(rc.Steps)}
		rec.ClientCreatedAt, _ = v.time(item, "clientCreatedAt", rc.ClientCreatedAt)
		rec.Questions = v.questions(item, rc, quesIDs)
		out = append(out, rec)
	}
	return out
}

// recordingDocuments checks the documents a recording lists, which must be of
// one workspace, and counts the recording on each of them.
func (v *validator) recordingDocuments(item string, rc Recording, r *refs) {
	ws := ""
	seen := map[string]bool{}
	for _, id := range rc.DocumentIDs {
		doc := r.documents[id]
		switch {
		case doc == nil:
			v.add(item, "documentIds lists %s, which does not exist in documents", clipQuote(id))
		case seen[id]:
			v.add(item, "documentIds lists %q twice", id)
		case r.workspaces[doc.WorkspaceID] == nil: // its library or workspace is missing: a problem of its own
		case ws != "" && doc.WorkspaceID != ws:
			v.add(item, "documentIds mixes workspaces (%s and %s); a recording belongs to one workspace", ws, doc.WorkspaceID)
		default:
			ws = doc.WorkspaceID
			doc.RecordingCount++
			if rc.Shared {
				doc.SharedRecordingCount++
			}
		}
		seen[id] = true
	}
}

// questions checks a recording's questions, whose IDs are unique across
// recordings, and returns them by sequence order.
func (v *validator) questions(item string, rc Recording, quesIDs map[string]string) []doclib.Question {
	out := make([]doclib.Question, 0, len(rc.Questions))
	orders := map[int]bool{}
	for j, q := range rc.Questions {
		qitem := fmt.Sprintf("%s: questions[%d]", item, j)
		if v.id(qitem, "id", "ques_", q.ID) {
			if other, ok := quesIDs[q.ID]; ok {
				v.add(qitem, "id %q is already used in %s", q.ID, other)
			}
			quesIDs[q.ID] = rc.ID
		}
		v.text(qitem, "question", q.Question, math.MaxInt) // bounded with the steps, in bytes
		if q.SequenceOrder < 1 {
			v.add(qitem, "sequenceOrder %d must be 1 or more", q.SequenceOrder)
		} else if orders[q.SequenceOrder] {
			v.add(qitem, "sequenceOrder %d is used twice in this recording", q.SequenceOrder)
		}
		orders[q.SequenceOrder] = true
		out = append(out, doclib.Question{ID: q.ID, Question: q.Question, Response: q.Response, SequenceOrder: q.SequenceOrder})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].SequenceOrder < out[b].SequenceOrder })
	return out
}

// libraryLabels checks the label lists derive computed: they are stored in the
// library's own DynamoDB item.
func (v *validator) libraryLabels(libs []*doclib.Library) {
	for i, l := range libs {
		if n := labelBytes(l); n > maxLibraryLabelBytes {
			v.add(itemName("libraries", i, shown(l.ID)), "the categories, tags and applications of its documents are %s bytes written as JSON; at most %s are allowed, so that the library fits a DynamoDB item (400 KB): use fewer distinct values", count(n), count(maxLibraryLabelBytes))
		}
	}
}

// RecordingStatuses are the values a recording's status may take.
var RecordingStatuses = []string{"processing", "processed", "failed"}

// nonNil copies ss into a list that is never nil, also when ss is empty:
// docs/api.md, "Conventions".
func nonNil(ss []string) []string {
	out := make([]string, len(ss))
	copy(out, ss)
	return out
}

// schema checks a template. ok is false when the template cannot check content
// (no sections, or a section without a usable key or type): its documents' content
// is then not checked, as every message would follow from the template's problem.
func (v *validator) schema(item string, s Schema) (out doclib.Schema, ok bool) {
	out = doclib.Schema{Version: s.Version, Sections: make([]doclib.Section, 0, len(s.Sections))}
	if s.Version == 0 && len(s.Sections) == 0 {
		v.add(item, `schema is missing; give one such as {"version": 1, "sections": [{"key": "summary", "title": "Summary", "type": "text"}]}`)
		return out, false
	}
	ok = true
	if s.Version < 1 {
		v.add(item, "schema.version %d must be 1 or more", s.Version)
	}
	switch {
	case len(s.Sections) == 0:
		v.add(item, "schema.sections is empty; a template has at least one section")
		ok = false
	case len(s.Sections) > maxSections:
		v.add(item, "schema.sections has %d sections; at most %d are allowed", len(s.Sections), maxSections)
		ok = false
	}
	keys := map[string]bool{}
	for j, sec := range s.Sections {
		field := fmt.Sprintf("schema.sections[%d]", j)
		if !sectionKeyRE.MatchString(sec.Key) {
			v.add(item, "%s.key %s must be a camelCase name such as \"summary\" or \"knownIssues\"", field, clipQuote(sec.Key))
			ok = false
		} else if keys[sec.Key] {
			v.add(item, "%s.key %q is used twice", field, sec.Key)
			ok = false
		}
		keys[sec.Key] = true
		v.text(item, field+".title", sec.Title, maxSectionTitleChars)
		if !v.enum(item, field+".type", sec.Type, doclib.SectionText, doclib.SectionSteps, doclib.SectionList) {
			ok = false
		}
		out.Sections = append(out.Sections, doclib.Section{Key: sec.Key, Title: sec.Title, Type: sec.Type})
	}
	return out, ok
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
		v.add(item, "content has section %s, which the template of %s (version %d) does not have", clipQuote(k), lib.ID, lib.Schema.Version)
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
	if b.Len() > maxContentBytes { // the stored form, measured as it is stored
		v.add(item, "content is %s bytes written as JSON; at most %s are allowed, so that the document fits a DynamoDB item (400 KB)", count(b.Len()), count(maxContentBytes))
	}
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
func derive(d *doclib.DataSet, libraries map[string]*doclib.Library) {
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

// openError says, in a reader's words, why the data-set file at path could
// not be opened, and what to do.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no data-set file at %s: check the path (docs/dataset.md describes the format; docs/examples/minimal.json is one)", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("the data-set file %s cannot be read with this user's permissions", path)
	}
	return fmt.Errorf("the data-set file %s cannot be opened: %v", path, errors.Unwrap(err))
}
