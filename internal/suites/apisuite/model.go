package apisuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

// model is the demo data set as the data-set file states it, with every
// expectation the suite needs computed here from the file alone (never from
// the server's own derived values, and never from answers of a past run).
type model struct {
	file       dataset.File
	workspaces map[string]*dataset.Workspace
	devices    map[string]*dataset.Device
	libs       map[string]*dataset.Library
	docs       map[string]*dataset.Document
	docsByLib  map[string][]*dataset.Document
	recsByDoc  map[string][]*dataset.Recording
	keys       []*dataset.APIKey
	now        time.Time

	// Roles: demo keys picked by what they are set up to show.
	full        *dataset.APIKey // every library of its workspace, recording details, several libraries
	fullNoRec   *dataset.APIKey // the same scope as full, without recording details
	scoped      *dataset.APIKey // a subset of its workspace's libraries
	expired     *dataset.APIKey
	removed     *dataset.APIKey // device removed
	archived    *dataset.APIKey // device archived
	individual  *dataset.APIKey // Individual plan, recording details
	noCredit    *dataset.APIKey // metered workspace without credit
	ownProvider *dataset.APIKey // own provider key, not metered
	suspended   *dataset.APIKey // suspended subscription
}

// loadModel reads demo.json (the bytes shared/data/demo embeds) as a plain data-set
// file.
func loadModel() (*model, error) {
	m := &model{workspaces: map[string]*dataset.Workspace{}, devices: map[string]*dataset.Device{},
		libs: map[string]*dataset.Library{}, docs: map[string]*dataset.Document{},
		docsByLib: map[string][]*dataset.Document{}, recsByDoc: map[string][]*dataset.Recording{}, now: time.Now()}
	dec := json.NewDecoder(bytes.NewReader(demo.JSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m.file); err != nil {
		return nil, fmt.Errorf("apisuite: read demo.json: %w", err)
	}
	f := &m.file
	for i := range f.Workspaces {
		m.workspaces[f.Workspaces[i].ID] = &f.Workspaces[i]
	}
	for i := range f.Devices {
		m.devices[f.Devices[i].ID] = &f.Devices[i]
	}
	for i := range f.Libraries {
		m.libs[f.Libraries[i].ID] = &f.Libraries[i]
	}
	for i := range f.Documents {
		d := &f.Documents[i]
		m.docs[d.ID] = d
		m.docsByLib[d.LibraryID] = append(m.docsByLib[d.LibraryID], d)
	}
	for i := range f.Recordings {
		r := &f.Recordings[i]
		for _, id := range r.DocumentIDs {
			m.recsByDoc[id] = append(m.recsByDoc[id], r)
		}
	}
	for i := range f.APIKeys {
		m.keys = append(m.keys, &f.APIKeys[i])
	}
	return m, m.pickRoles()
}

func (m *model) pickRoles() error {
	var errs []string
	pick := func(role string, ok func(k *dataset.APIKey) bool) *dataset.APIKey {
		for _, k := range m.keys {
			if ok(k) {
				return k
			}
		}
		errs = append(errs, role)
		return nil
	}
	all := func(k *dataset.APIKey) bool { return len(k.Libraries) == 1 && k.Libraries[0] == "*" }
	metered := func(k *dataset.APIKey) bool {
		w := m.workspaces[k.WorkspaceID]
		return w.Subscription == "active" && !w.OwnProviderKey && w.AICredit > 0
	}
	m.full = pick("full", func(k *dataset.APIKey) bool {
		return m.works(k) && all(k) && k.RecordingDetails && metered(k) &&
			m.workspaces[k.WorkspaceID].Plan != "individual" && len(m.workspaceLibs(k.WorkspaceID)) >= 3
	})
	if m.full == nil {
		return fmt.Errorf("apisuite: demo data has no key for role full")
	}
	m.fullNoRec = pick("full without recording details", func(k *dataset.APIKey) bool {
		return m.works(k) && all(k) && !k.RecordingDetails && k.WorkspaceID == m.full.WorkspaceID
	})
	m.scoped = pick("scoped", func(k *dataset.APIKey) bool {
		return m.works(k) && !all(k) && k.RecordingDetails && len(m.visibleLibs(k)) < len(m.workspaceLibs(k.WorkspaceID))
	})
	m.expired = pick("expired", func(k *dataset.APIKey) bool { return m.isExpired(k) })
	m.removed = pick("removed device", func(k *dataset.APIKey) bool {
		return !m.isExpired(k) && m.devices[k.DeviceID] != nil && m.devices[k.DeviceID].Status == "removed"
	})
	m.archived = pick("archived device", func(k *dataset.APIKey) bool {
		return !m.isExpired(k) && m.devices[k.DeviceID] != nil && m.devices[k.DeviceID].Status == "archived"
	})
	m.individual = pick("individual plan", func(k *dataset.APIKey) bool {
		return m.works(k) && k.RecordingDetails && m.workspaces[k.WorkspaceID].Plan == "individual" && metered(k)
	})
	m.noCredit = pick("no AI credit", func(k *dataset.APIKey) bool {
		w := m.workspaces[k.WorkspaceID]
		return m.works(k) && w.Subscription == "active" && !w.OwnProviderKey && w.AICredit == 0
	})
	m.ownProvider = pick("own provider key", func(k *dataset.APIKey) bool {
		w := m.workspaces[k.WorkspaceID]
		return m.works(k) && w.Subscription == "active" && w.OwnProviderKey
	})
	m.suspended = pick("suspended subscription", func(k *dataset.APIKey) bool {
		return m.works(k) && m.workspaces[k.WorkspaceID].Subscription == "suspended"
	})
	if len(errs) > 0 {
		return fmt.Errorf("apisuite: demo data has no key for: %s", strings.Join(errs, ", "))
	}
	return nil
}

func (m *model) isExpired(k *dataset.APIKey) bool {
	if k.ExpiresAt == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, k.ExpiresAt)
	return err == nil && !m.now.Before(t)
}

// works reports whether a key authenticates.
func (m *model) works(k *dataset.APIKey) bool {
	d := m.devices[k.DeviceID]
	return !m.isExpired(k) && d != nil && d.Status == "active" && m.workspaces[k.WorkspaceID] != nil
}

// workingKeys are the keys that authenticate.
func (m *model) workingKeys() []*dataset.APIKey {
	var out []*dataset.APIKey
	for _, k := range m.keys {
		if m.works(k) {
			out = append(out, k)
		}
	}
	return out
}

func (m *model) workspaceLibs(ws string) []string {
	var out []string
	for _, l := range m.file.Libraries {
		if l.WorkspaceID == ws {
			out = append(out, l.ID)
		}
	}
	sort.Strings(out)
	return out
}

// visibleLibs are the library IDs a key may see (docs/api.md, "Authentication and scope").
func (m *model) visibleLibs(k *dataset.APIKey) []string {
	var out []string
	for _, id := range m.workspaceLibs(k.WorkspaceID) {
		if m.sees(k, id) {
			out = append(out, id)
		}
	}
	return out
}

func (m *model) sees(k *dataset.APIKey, libID string) bool {
	l := m.libs[libID]
	if l == nil || l.WorkspaceID != k.WorkspaceID {
		return false
	}
	return slices.Contains(k.Libraries, "*") || slices.Contains(k.Libraries, libID)
}

func (m *model) seesDoc(k *dataset.APIKey, docID string) bool {
	d := m.docs[docID]
	return d != nil && m.sees(k, d.LibraryID)
}

// visibleDocs are the documents a key may see, in file order.
func (m *model) visibleDocs(k *dataset.APIKey) []*dataset.Document {
	var out []*dataset.Document
	for i := range m.file.Documents {
		if m.sees(k, m.file.Documents[i].LibraryID) {
			out = append(out, &m.file.Documents[i])
		}
	}
	return out
}

func (m *model) recordingCount(docID string) int { return len(m.recsByDoc[docID]) }

// readableRecordings are a document's recordings that source-recordings lists,
// in its order: clientCreatedAt descending, then id.
func (m *model) readableRecordings(docID string) []*dataset.Recording {
	d := m.docs[docID]
	if m.workspaces[m.libs[d.LibraryID].WorkspaceID].Plan == "individual" {
		return nil
	}
	var out []*dataset.Recording
	for _, r := range m.recsByDoc[docID] {
		if r.Shared {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *dataset.Recording) int {
		if c := parseTime(b.ClientCreatedAt).Compare(parseTime(a.ClientCreatedAt)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// byUpdated orders documents as library document lists are: updatedAt
// descending, then id.
func byUpdated(a, b *dataset.Document) int {
	if c := parseTime(b.UpdatedAt).Compare(parseTime(a.UpdatedAt)); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// byActivity is "most active": recordingCount descending, then lastSeen
// descending, then id.
func (m *model) byActivity(a, b *dataset.Document) int {
	if ra, rb := m.recordingCount(a.ID), m.recordingCount(b.ID); ra != rb {
		return rb - ra
	}
	if c := parseTime(b.LastSeen).Compare(parseTime(a.LastSeen)); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

func (m *model) libOf(docID string) string { return m.docs[docID].LibraryID }

// intraEdges are the edges with both ends in the library.
func (m *model) intraEdges(libID string) []dataset.Edge {
	var out []dataset.Edge
	for _, e := range m.file.Edges {
		if m.libOf(e.SourceDocumentID) == libID && m.libOf(e.TargetDocumentID) == libID {
			out = append(out, e)
		}
	}
	return out
}

// labelCounts counts a library's categories, tags or applications.
func (m *model) labelCounts(libID, kind string) map[string]int {
	out := map[string]int{}
	for _, d := range m.docsByLib[libID] {
		switch kind {
		case "categories":
			out[d.Category]++
		case "tags":
			for _, t := range d.Tags {
				out[t]++
			}
		case "applications":
			for _, a := range d.Applications {
				out[a]++
			}
		}
	}
	return out
}

// contentStrings are the strings of a document's content (text sections and
// the items of list and steps sections).
func contentStrings(c map[string]any) []string {
	var out []string
	for _, v := range c {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, s := range x {
				if str, ok := s.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

// matchesSearch is the documents filter's `search`: a substring of the title
// or of the content. fold makes it case-insensitive.
func matchesSearch(d *dataset.Document, needle string, fold bool) bool {
	has := strings.Contains
	if fold {
		has = func(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }
	}
	if has(d.Title, needle) {
		return true
	}
	for _, s := range contentStrings(d.Content) {
		if has(s, needle) {
			return true
		}
	}
	return false
}

// docEdges are a document's edges as a key sees them: those whose other end
// is in scope.
func (m *model) docEdges(k *dataset.APIKey, docID string) (out, in []dataset.Edge) {
	for _, e := range m.file.Edges {
		if e.SourceDocumentID == docID && m.seesDoc(k, e.TargetDocumentID) {
			out = append(out, e)
		}
		if e.TargetDocumentID == docID && m.seesDoc(k, e.SourceDocumentID) {
			in = append(in, e)
		}
	}
	return out, in
}

// traversal is the expected result of a walk.
type traversal struct {
	depth map[string]int
	edges map[edgeKey]dataset.Edge
}

type edgeKey struct{ source, target, label string }

func keyOf(e dataset.Edge) edgeKey { return edgeKey{e.SourceDocumentID, e.TargetDocumentID, e.Label} }

// traverse walks breadth first from root as the key sees the graph: it never
// enters a document outside scope, follows only label when set, and collects
// every edge followed from a document reached before the last level.
func (m *model) traverse(k *dataset.APIKey, root, direction, label string, maxDepth int) traversal {
	tr := traversal{depth: map[string]int{root: 0}, edges: map[edgeKey]dataset.Edge{}}
	frontier := []string{root}
	for depth := 1; depth <= maxDepth && len(frontier) > 0; depth++ {
		in := map[string]bool{}
		for _, id := range frontier {
			in[id] = true
		}
		var next []string
		reach := func(e dataset.Edge, other string) {
			if (label != "" && e.Label != label) || !m.seesDoc(k, other) {
				return
			}
			tr.edges[keyOf(e)] = e
			if _, ok := tr.depth[other]; !ok {
				tr.depth[other] = depth
				next = append(next, other)
			}
		}
		for _, e := range m.file.Edges {
			if direction != "incoming" && in[e.SourceDocumentID] {
				reach(e, e.TargetDocumentID)
			}
			if direction != "outgoing" && in[e.TargetDocumentID] {
				reach(e, e.SourceDocumentID)
			}
		}
		frontier = next
	}
	return tr
}

// edgeDegree counts a document's edges, and those crossing into another library.
func (m *model) edgeDegree(docID string) (all, cross int) {
	for _, e := range m.file.Edges {
		if e.SourceDocumentID == docID || e.TargetDocumentID == docID {
			all++
			if m.libOf(e.SourceDocumentID) != m.libOf(e.TargetDocumentID) {
				cross++
			}
		}
	}
	return all, cross
}

// busiest is the document of the library with the most edges (most crossing
// into other libraries first when cross is set), ties by id.
func (m *model) busiest(libID string, cross bool) *dataset.Document {
	var best *dataset.Document
	bestAll, bestCross := -1, -1
	for _, d := range m.docsByLib[libID] {
		a, c := m.edgeDegree(d.ID)
		better := a > bestAll || (a == bestAll && d.ID < best.ID)
		if cross {
			better = c > bestCross || (c == bestCross && better)
		}
		if better {
			best, bestAll, bestCross = d, a, c
		}
	}
	return best
}
