package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fill sets every field of v, recursively, to a value that is not the zero one.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Map: // content
		v.Set(reflect.ValueOf(map[string]any{"summary": "s", "steps": []any{"a", "b"}}))
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: " + v.Kind().String())
	}
}

// Every field of the format decodes into its place, also when an item is read
// a second time to explain its problems: a field whose tag is wrong fails here.
func TestDecoderReadsEveryField(t *testing.T) {
	var want File
	n := 0
	fill(reflect.ValueOf(&want).Elem(), &n)
	raw, err := json.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	v := &validator{}
	var got File
	if fatal := decodeFile(bytes.NewReader(raw), v, &got); fatal != "" || len(v.problems) > 0 {
		t.Fatalf("decoding: %s %q", fatal, v.problems)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(&got)
		t.Errorf("decoded differently:\n got %s\nwant %s", g, raw)
	}
	d := &decoder{}
	var again File
	d.explain(raw, reflect.ValueOf(&again).Elem())
	if len(d.probs) > 0 || !reflect.DeepEqual(again, want) {
		g, _ := json.Marshal(&again)
		t.Errorf("explain: %q, decoded differently:\n got %s\nwant %s", d.probs, g, raw)
	}
}

func TestChars(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "€", "😀", "\n", "\xff", "\xe2\x82"}
	for range 1000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := []byte(b.String())
		want := utf8.RuneCount(s)
		if !utf8.Valid(s) { // both count what they can; only valid text matters
			continue
		}
		if got := chars(s); got != want {
			t.Fatalf("chars(%q) = %d, want %d", s, got, want)
		}
	}
}

// Items at every limit of the format, in the costliest characters ('<' is six
// bytes in JSON with HTML escaping, more than any character stored raw), still fit
// a DynamoDB item with room for its keys: the import's own size check is not
// what refuses a file local mode took.
func TestItemsAtTheLimitsFitDynamoDB(t *testing.T) {
	const item = 400 * 1024
	costly := func(n int, tag string) string { // n characters, distinct by tag
		return tag + strings.Repeat("<", n-len(tag))
	}
	ts := "2026-01-01T00:00:00.123456789+01:00"
	f := &File{Workspaces: []Workspace{{ID: "ws_" + strings.Repeat("w", 64), Name: costly(maxNameChars, ""), Plan: "team", Subscription: "active"}}}
	ws := f.Workspaces[0].ID
	f.Devices = []Device{{ID: "dev_1", WorkspaceID: ws, Status: "active"}}
	lib := Library{ID: "lib_" + strings.Repeat("l", 64), WorkspaceID: ws, Name: costly(maxNameChars, ""), Slug: strings.Repeat("s", 100),
		Description: costly(maxDescriptionChars, ""), CreatedAt: ts, UpdatedAt: ts, Schema: Schema{Version: 1}}
	for i := range maxPreviousSlugs {
		lib.PreviousSlugs = append(lib.PreviousSlugs, fmt.Sprintf("%s-%d", strings.Repeat("p", 95), i))
	}
	for i := range maxSections {
		lib.Schema.Sections = append(lib.Schema.Sections, Section{Key: fmt.Sprintf("k%02d%s", i, strings.Repeat("K", 61)), Title: costly(maxSectionTitleChars, ""), Type: "steps"})
	}
	f.Libraries = []Library{lib}
	key := APIKey{ID: "key_1", WorkspaceID: ws, DeviceID: "dev_1", Secret: "0123456789abcdef"}
	for i := range maxKeyLibraries {
		id := fmt.Sprintf("lib_%04d%s", i, strings.Repeat("x", 60))
		if i > 0 {
			f.Libraries = append(f.Libraries, Library{ID: id, WorkspaceID: ws, Name: "n", Slug: fmt.Sprint("l-", i), CreatedAt: ts, UpdatedAt: ts,
				Schema: Schema{Version: 1, Sections: []Section{{Key: "a", Title: "A", Type: "text"}}}})
		}
		key.Libraries = append(key.Libraries, f.Libraries[i].ID)
	}
	f.APIKeys = []APIKey{key}
	labelsLeft := maxLibraryLabelBytes - 60_000 // what the shared labels below take
	for i := range maxRecordingDocuments {
		doc := Document{ID: fmt.Sprintf("doc_%03d%s", i, strings.Repeat("d", 61)), LibraryID: lib.ID, Slug: fmt.Sprintf("%s-%d", strings.Repeat("d", 190), i),
			Title: costly(maxTitleChars, ""), Category: costly(maxLabelChars, ""), DeviceCount: 1 << 30,
			FirstSeen: ts, LastSeen: ts, CreatedAt: ts, UpdatedAt: ts, Content: map[string]any{}}
		for j := range maxLabelsPerDocument { // distinct labels until the library's lists are nearly full
			for _, list := range []*[]string{&doc.Tags, &doc.Applications} {
				if labelsLeft > 640 {
					*list = append(*list, costly(maxLabelChars, fmt.Sprintf("%d.%d.%d", i, j, len(*list))))
					labelsLeft -= 640
				} else {
					*list = append(*list, costly(maxLabelChars, fmt.Sprint(j)))
				}
			}
		}
		f.Documents = append(f.Documents, doc)
	}
	f.Documents[0].Content = map[string]any{"k00" + strings.Repeat("K", 61): []any{strings.Repeat("x", maxContentBytes-100)}}
	rec := Recording{ID: "rec_" + strings.Repeat("r", 64), Title: costly(maxTitleChars, ""), Status: "processed", ClientCreatedAt: ts,
		Steps: []string{costly((maxRecordingBytes-100)/6, "")}}
	for _, doc := range f.Documents {
		rec.DocumentIDs = append(rec.DocumentIDs, doc.ID)
	}
	f.Recordings = []Recording{rec}
	f.Edges = []Edge{{SourceDocumentID: f.Documents[0].ID, TargetDocumentID: f.Documents[1].ID, Label: costly(maxLabelChars, ""), EdgeType: "data"}}
	f.Documents[1].Title = costly(maxTitleChars, "")

	d, err := Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"workspace": d.Workspaces[0], "key": d.APIKeys[0], "library": d.Libraries[0],
		"document": d.Documents[0], "recording": d.Recordings[0], "edge": d.Edges[0]} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes as JSON", name, len(b))
		if len(b) > item-8*1024 {
			t.Errorf("%s: %d bytes as JSON; with its keys it could pass DynamoDB's %d", name, len(b), item)
		}
	}
	if n := labelBytes(d.Libraries[0]); n < maxLibraryLabelBytes*9/10 {
		t.Errorf("the library's labels are %d bytes; the test means to bring them near %d", n, maxLibraryLabelBytes)
	}
}
