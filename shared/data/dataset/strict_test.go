package dataset_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

// fixtureJSON is the fixture as compact JSON with each old string (given in
// pairs with its new one) replaced once; an old string that is not there fails
// the test, so a changed fixture cannot quietly make a case pass.
func fixtureJSON(t *testing.T, pairs ...string) string {
	t.Helper()
	s := string(encode(t, fixture.File()))
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("fixture JSON has no %q", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// rejection loads raw and returns the problems, failing unless it is refused
// with a *ValidationError.
func rejection(t *testing.T, r io.Reader) *dataset.ValidationError {
	t.Helper()
	d, err := dataset.Load(r)
	if err == nil || d != nil {
		t.Fatalf("accepted; want a rejection")
	}
	var ve *dataset.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v, want *ValidationError", err, err)
	}
	return ve
}

type rawCase struct {
	name string
	raw  string
	// wants are in the message; exactly, when set, is the only problem.
	wants   []string
	exactly string
	// unwanted must not be in the message: knock-on problems that point at the
	// wrong fix.
	unwanted []string
}

func runRaw(t *testing.T, cases []rawCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ve := rejection(t, strings.NewReader(c.raw))
			msg := ve.Error()
			for _, w := range c.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("message does not contain %q:\n%s", w, msg)
				}
			}
			if c.exactly != "" && (len(ve.Problems) != 1 || ve.More != 0 || ve.Problems[0] != c.exactly) {
				t.Errorf("problems %q, want exactly [%q]", ve.Problems, c.exactly)
			}
			for _, u := range c.unwanted {
				if strings.Contains(msg, u) {
					t.Errorf("message contains %q:\n%s", u, msg)
				}
			}
		})
	}
}

// Field names are matched exactly, as at the top level: encoding/json's
// case-insensitive match accepted {"ID": ...} for "id".
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	runRaw(t, []rawCase{
		{name: "item", raw: `{"workspaces":[{"ID":"ws_a","NAME":"A","plan":"team","aiCredit":1,"ownProviderKey":false,"subscription":"active"}]}`,
			wants: []string{`workspaces[0]: unknown field "ID"; field names are case-sensitive: did you mean "id"?`,
				`workspaces[0]: unknown field "NAME"; field names are case-sensitive: did you mean "name"?`, "2 problems"}},
		{name: "section", raw: fixtureJSON(t, `{"key":"summary","title":"Summary"`, `{"Key":"summary","title":"Summary"`),
			wants: []string{`libraries[0] (lib_a1): schema.sections[0]: unknown field "Key"; field names are case-sensitive: did you mean "key"?`}},
		{name: "question", raw: fixtureJSON(t, `"question":"Was MFA`, `"Question":"Was MFA`),
			exactly: `recordings[0] (rec_a1): questions[0]: unknown field "Question"; field names are case-sensitive: did you mean "question"?`},
		{name: "top level", raw: `{"Workspaces": []}`,
			exactly: `the top level has an unknown field "Workspaces"; field names are case-sensitive: did you mean "workspaces"?`},
	})
}

// encoding/json kept the last of two equal keys without a word.
func TestDuplicateKeysAreRefused(t *testing.T) {
	runRaw(t, []rawCase{
		{name: "field", raw: fixtureJSON(t, `"plan":"team"`, `"plan":"gold","plan":"team"`),
			exactly: `workspaces[0] (ws_a): field "plan" is given twice; give each field once`},
		{name: "id", raw: fixtureJSON(t, `{"id":"doc_a1_2",`, `{"id":"doc_a1_2","id":"doc_zz",`),
			exactly: `documents[1] (doc_a1_2): field "id" is given twice; give each field once`},
		{name: "nested", raw: fixtureJSON(t, `"id":"ques_1",`, `"id":"ques_1","id":"ques_9",`),
			exactly: `recordings[0] (rec_a1): questions[1]: field "id" is given twice; give each field once`},
		{name: "content section", raw: fixtureJSON(t, `"summary":"Reset a password in Okta`, `"summary":"x","summary":"Reset a password in Okta`),
			exactly: `documents[0] (doc_a1_1): content has section "summary" twice; give each section once`},
	})
}

// encoding/json turned both into U+FFFD without a word.
func TestInvalidTextIsRefused(t *testing.T) {
	runRaw(t, []rawCase{
		{name: "invalid UTF-8", raw: fixtureJSON(t, `"title":"Reset a user's password"`, "\"title\":\"Reset a user's \xffpassword\""),
			wants: []string{`documents[0] (doc_a1_1): field "title" is not valid UTF-8 (the byte 0xff at line 1, column `, "1 problem"}},
		{name: "lone first half", raw: fixtureJSON(t, `"title":"Reset a user's password"`, `"title":"Reset \ud800 password"`),
			wants: []string{`documents[0] (doc_a1_1): field "title" holds \ud800 at line 1, column `, "half of a UTF-16 surrogate pair", "1 problem"}},
		{name: "lone second half", raw: fixtureJSON(t, `"Click Reset Password"`, `"Click \udc00 Reset"`),
			wants: []string{`documents[0] (doc_a1_1): field "content.steps[2]" holds \udc00`}},
		{name: "first half then another escape", raw: fixtureJSON(t, `"name":"Acme"`, `"name":"A\ud800\u0041"`),
			wants: []string{`workspaces[0] (ws_a): field "name" holds \ud800`}},
	})
	// A pair, and characters split across reads, decode to what they say.
	raw := fixtureJSON(t, `"name":"Acme"`, `"name":"Acme \ud83d\ude00 é😀 \u00e9"`)
	d, err := dataset.Load(iotest.OneByteReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Workspaces[0].Name; got != "Acme 😀 é😀 é" {
		t.Errorf("name %q", got)
	}
}

// late makes a syntax error in the title of the last recording but one of an
// indented file, and returns the file and the message it must get. Each edit
// changes the file first.
func late(t *testing.T, f *dataset.File, edits ...func([]byte) []byte) (raw []byte, want string) {
	t.Helper()
	var buf bytes.Buffer
	if err := demo.Encode(&buf, f); err != nil {
		t.Fatal(err)
	}
	raw = buf.Bytes()
	for _, edit := range edits {
		raw = edit(raw)
	}
	k := len(f.Recordings) - 2
	rec := f.Recordings[k]
	at := bytes.Index(raw, []byte(`"id": "`+rec.ID+`"`))
	title := at + bytes.Index(raw[at:], []byte(`"title": `))
	if at < 0 || title < at {
		t.Fatalf("recording %s not found", rec.ID)
	}
	raw = append(raw[:title+len(`"title"`):title+len(`"title"`)], raw[title+len(`"title":`):]...) // drop the colon
	off := title + len(`"title" `)
	line := bytes.Count(raw[:off], []byte{'\n'}) + 1
	col := utf8.RuneCount(raw[bytes.LastIndexByte(raw[:off], '\n')+1:off]) + 1
	want = fmt.Sprintf(`recordings[%d] (%s): invalid JSON at line %d, column %d (byte offset %d): the character '"' after the field name "title"; a colon is missing`,
		k, rec.ID, line, col, off)
	return raw, want
}

// chunks reads n bytes at a time, so that every buffer boundary is crossed.
type chunks struct {
	r io.Reader
	n int
}

func (c chunks) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// Positions count every byte of the file: encoding/json's offsets counted only
// what one Decode call read, and drifted by everything read before the item.
func TestSyntaxErrorPositions(t *testing.T) {
	small, wantSmall := late(t, demo.Generate(demo.Options{}))
	large, wantLarge := late(t, demo.Generate(demo.Options{Documents: 3000}))
	if len(large) < 3<<20 {
		t.Fatalf("the large file is %d bytes; it must span several read buffers", len(large))
	}
	for _, c := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"demo set", bytes.NewReader(small), wantSmall},
		{"demo set, a byte at a time", iotest.OneByteReader(bytes.NewReader(small)), wantSmall},
		{"3,000 documents", bytes.NewReader(large), wantLarge},
		{"3,000 documents, 4,093 bytes at a time", chunks{bytes.NewReader(large), 4093}, wantLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			ve := rejection(t, c.r)
			if len(ve.Problems) != 1 || ve.Problems[0] != c.want {
				t.Errorf("problems %q\nwant [%q]", ve.Problems, c.want)
			}
		})
	}
}

// An item with a problem is read a second time (decode.go, restart): the
// positions of a later syntax error are still exact, at every buffer boundary.
func TestPositionsAfterItemsWithProblems(t *testing.T) {
	for _, c := range []struct {
		name string
		f    *dataset.File
		read func(io.Reader) io.Reader
	}{
		{"demo set, a byte at a time", demo.Generate(demo.Options{}), iotest.OneByteReader},
		{"3,000 documents", demo.Generate(demo.Options{Documents: 3000}), func(r io.Reader) io.Reader { return r }},
		{"3,000 documents, 4,093 bytes at a time", demo.Generate(demo.Options{Documents: 3000}), func(r io.Reader) io.Reader { return chunks{r, 4093} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var wants []string
			extra := func(raw []byte) []byte { // an unknown field in every 7th recording before the broken one
				var out []byte
				for k := 0; k < len(c.f.Recordings)-2; k += 7 {
					id := []byte(`"id": "` + c.f.Recordings[k].ID + `"`)
					i := bytes.Index(raw, id)
					out = append(append(out, raw[:i]...), `"extra": 1, `...)
					raw = raw[i:]
					wants = append(wants, fmt.Sprintf(`recordings[%d] (%s): unknown field "extra"`, k, c.f.Recordings[k].ID))
				}
				return append(out, raw...)
			}
			raw, want := late(t, c.f, extra)
			ve := rejection(t, c.read(bytes.NewReader(raw)))
			if len(wants) < 2 || len(ve.Problems) != min(len(wants), 25)+1 || ve.Problems[len(ve.Problems)-1] != want {
				t.Fatalf("%d problems, last %q\nwant %d, last %q", len(ve.Problems), ve.Problems[len(ve.Problems)-1], min(len(wants), 25)+1, want)
			}
			for i, p := range ve.Problems[:len(ve.Problems)-1] {
				if !strings.HasPrefix(p, wants[i]) {
					t.Errorf("problem %q, want %q", p, wants[i])
				}
			}
		})
	}
}

func utf16LE(s string) string {
	var b bytes.Buffer
	b.Write([]byte{0xff, 0xfe})
	for _, u := range utf16.Encode([]rune(s)) {
		binary.Write(&b, binary.LittleEndian, u)
	}
	return b.String()
}

func TestFileLevelMessages(t *testing.T) {
	long := strings.Repeat("9", 400)
	runRaw(t, []rawCase{
		{name: "empty", raw: "", exactly: `the file is empty; it must hold one JSON object such as {"workspaces": [...], "documents": [...]}`},
		{name: "white space only", raw: " \n\t\r\n ", wants: []string{"the file is empty"}},
		{name: "UTF-16", raw: utf16LE(fixtureJSON(t)), exactly: "the file is not UTF-8 (it looks like UTF-16); save it as UTF-8"},
		{name: "UTF-16 without a mark", raw: utf16LE(`{"workspaces": []}`)[2:], wants: []string{"it looks like UTF-16"}},
		{name: "truncated between items", raw: "{\"workspaces\": [\n  {\"id\": \"ws_a\", \"name\": \"A\", \"plan\": \"team\", \"subscription\": \"active\"},\n",
			exactly: "workspaces, after workspaces[0]: the file ends too early, at line 3, column 1 (byte offset 90); is it complete?"},
		{name: "truncated in a nested array", raw: fixtureJSON(t)[:strings.Index(fixtureJSON(t), `"Clicked Reset`)],
			wants: []string{"recordings[0] (rec_a1): the file ends too early, at line 1, column "}},
		{name: "a deep typo is not called a non-object", raw: `{"edges": [{"label": "x" "edgeType": "data"}]}`,
			exactly:  `edges[0]: invalid JSON at line 1, column 26 (byte offset 25): the character '"' after a field's value; a comma or '}' is missing`,
			unwanted: []string{"not a data-set JSON object"}},
		{name: "trailing comma", raw: `{"devices": [{"id": "dev_a", "workspaceId": "ws_a", "status": "active"},]}`,
			wants: []string{`devices, after devices[0]: invalid JSON at line 1, column 73 (byte offset 72)`, "remove the comma after the last element"}},
		{name: "long number clipped", raw: `{"workspaces": [{"id": "ws_a", "aiCredit": ` + long + `}]}`,
			wants: []string{`workspaces[0] (ws_a): field "aiCredit" is ` + long[:40] + `… (400 characters), out of range`}, unwanted: []string{long[:41]}},
		{name: "long string clipped", raw: `{"workspaces": [{"id": "ws_a", "aiCredit": "` + long + `"}]}`,
			wants: []string{`(a JSON string "` + long[:40] + `"… (400 characters) where a whole number was expected)`}, unwanted: []string{long[:41]}},
		{name: "null item", raw: `{"devices": [null]}`, exactly: `devices[0]: null where an object was expected`},
		{name: "nesting bounded", raw: `{"documents": [{"content": {"summary": ` + strings.Repeat("[", 10_001) + `]}}]}`,
			wants: []string{"nested more than 10000 levels deep"}},
		{name: "comment", raw: "// data\n{}", wants: []string{"JSON has none"}},
		{name: "array given twice after an item read again", raw: `{"devices": [{"id": "dev_a", "os": "mac"}], "devices": []}`,
			wants: []string{`devices[0] (dev_a): unknown field "os"`, `the array "devices" is given twice`}},
		{name: "NaN", raw: `{"workspaces": [{"aiCredit": NaN}]}`,
			exactly: `workspaces[0]: invalid JSON at line 1, column 30 (byte offset 29): the character 'N' where a value was expected; values are strings in double quotes, numbers, objects, arrays, true, false or null`},
		{name: "misspelt literal", raw: `{"workspaces": [{"ownProviderKey": flase}]}`,
			wants: []string{`workspaces[0]: invalid JSON at line 1, column 37 (byte offset 36): the character 'l' in what begins like false`}},
		{name: "array of the wrong type, the rest still read", raw: `{"documents": {"id": "doc_1"}, "devices": [{"id": "dev_a", "os": "mac"}]}`,
			wants: []string{`"documents" must be an array of objects, not a JSON object`, `devices[0] (dev_a): unknown field "os"`}},
	})
	// A byte order mark is skipped.
	if _, err := dataset.Load(strings.NewReader("\xef\xbb\xbf" + fixtureJSON(t))); err != nil {
		t.Errorf("with a byte order mark: %v", err)
	}
}

// Nested problems give their path, with indices.
func TestNestedPaths(t *testing.T) {
	runRaw(t, []rawCase{
		{name: "unknown nested field", raw: fixtureJSON(t, `"question":"Was MFA`, `"title":"x","question":"Was MFA`),
			exactly: `recordings[0] (rec_a1): questions[0]: unknown field "title"; remove it or check its spelling against the fields id, question, response, sequenceOrder`},
		{name: "type error keeps the index", raw: fixtureJSON(t, `{"key":"steps","title":"Steps","type":"steps"}`, `{"key":"steps","title":"Steps","type":7}`),
			wants: []string{`libraries[0] (lib_a1): field "schema.sections[2].type" has the wrong type (a JSON number 7 where a string was expected)`}},
		{name: "array element", raw: fixtureJSON(t, `"tags":["security","daily"]`, `"tags":["security",5]`),
			exactly: `documents[0] (doc_a1_1): field "tags[1]" has the wrong type (a JSON number 5 where a string was expected)`},
	})
}

// Every list the loader hands on is [] when empty, never null (docs/api.md:
// "Conventions").
func TestEmptyListsAreNotNull(t *testing.T) {
	raw := fixtureJSON(t,
		`"steps":["Opened Okta","Clicked Reset Password"]`, `"steps":[]`, // rec_a1: given empty
		`"steps":["Opened Okta"]`, `"steps":null`, // rec_a1_private: null
		`"previousSlugs":["operations","it"],`, ``, // lib_a1: left out
		`"tags":["security","daily"]`, `"tags":[]`,
		`"applications":["Okta"]`, `"applications":null`)
	d, err := dataset.Load(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{d.Workspaces, d.Devices, d.Libraries, d.Documents, d.Edges, d.Recordings} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("null in %s", b)
		}
	}
	if s := d.Recordings[0].Steps; s == nil || len(s) != 0 {
		t.Errorf("steps %#v, want []string{}", s)
	}
	empty, err := dataset.Validate(&dataset.File{})
	if err != nil {
		t.Fatal(err)
	}
	if empty.Documents == nil || empty.Recordings == nil {
		t.Errorf("an empty data set has nil lists: %+v", empty)
	}
}
