package search

// The facets of a search count the labels of every matched document: tens of
// thousands of them when a query matches most of a large index. Hashing each
// label's name for each document would cost more than finding the documents,
// so a backend that holds its documents numbers their labels once, in a
// LabelTable, and a search counts numbers in an array.

// facet kinds, in the order of Facets' fields.
const (
	facetCategory = iota
	facetTag
	facetApplication
	facetLibrary
	facetKinds
)

// LabelTable numbers the facet labels of a backend's documents. Intern every
// document before the first search; the table must not change after.
type LabelTable struct {
	kind []uint8
	name []string
	ids  [facetKinds]map[string]uint32
}

// NewLabelTable returns an empty table.
func NewLabelTable() *LabelTable {
	t := &LabelTable{}
	for k := range t.ids {
		t.ids[k] = map[string]uint32{}
	}
	return t
}

// Intern numbers d's labels in t and records them on d: its category, tags,
// applications and library.
func (t *LabelTable) Intern(d *Doc) {
	ids := make([]uint32, 0, 2+len(d.Tags)+len(d.Applications))
	ids = append(ids, t.id(facetCategory, d.Category))
	for _, tag := range d.Tags {
		ids = append(ids, t.id(facetTag, tag))
	}
	for _, a := range d.Applications {
		ids = append(ids, t.id(facetApplication, a))
	}
	d.labels, d.labelIDs = t, append(ids, t.id(facetLibrary, d.LibraryID))
}

func (t *LabelTable) id(kind int, name string) uint32 {
	if id, ok := t.ids[kind][name]; ok {
		return id
	}
	id := uint32(len(t.name))
	t.ids[kind][name] = id
	t.kind = append(t.kind, uint8(kind))
	t.name = append(t.name, name)
	return id
}

// facetCounter counts the labels of the matched documents: by number for the
// documents of the first table it meets, by name for any other.
type facetCounter struct {
	table  *LabelTable
	counts []int32
	byName [facetKinds]map[string]int
}

func (f *facetCounter) add(d *Doc) {
	if d.labels != nil && (f.table == d.labels || f.table == nil) {
		if f.table == nil {
			f.table, f.counts = d.labels, make([]int32, len(d.labels.name))
		}
		for _, id := range d.labelIDs {
			f.counts[id]++
		}
		return
	}
	f.name(facetCategory, d.Category)
	for _, t := range d.Tags {
		f.name(facetTag, t)
	}
	for _, a := range d.Applications {
		f.name(facetApplication, a)
	}
	f.name(facetLibrary, d.LibraryID)
}

func (f *facetCounter) name(kind int, name string) {
	if f.byName[kind] == nil {
		f.byName[kind] = map[string]int{}
	}
	f.byName[kind][name]++
}

func (f *facetCounter) facets() Facets {
	var m [facetKinds]map[string]int
	for k := range m {
		m[k] = f.byName[k]
		if m[k] == nil {
			m[k] = map[string]int{}
		}
	}
	for id, n := range f.counts {
		if n > 0 {
			m[f.table.kind[id]][f.table.name[id]] += int(n)
		}
	}
	return Facets{Categories: SortFacets(m[facetCategory]), Tags: SortFacets(m[facetTag]),
		Applications: SortFacets(m[facetApplication]), Libraries: SortFacets(m[facetLibrary])}
}
