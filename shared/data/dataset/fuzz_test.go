package dataset_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/data/dataset"
)

// FuzzLoad: whatever the bytes, Load never panics, and reading them one byte
// at a time gives the same outcome as reading them whole: the same data, or
// a refusal naming the same items at the same positions. The wording may
// differ in the path inside a malformed item: it comes from jsontext's JSON
// pointer, whose last name depends on how far the decoder had buffered.
//
//	go test ./shared/data/dataset -run '^$' -fuzz FuzzLoad -fuzztime 3m
//
// where is what a refusal must say the same way however the file is read:
// each problem's item and the byte offsets it names.
func where(err error) string {
	return strings.Join(itemOrOffset.FindAllString(err.Error(), -1), " ")
}

var itemOrOffset = regexp.MustCompile(`(?m)^  - [a-zA-Z]+\[\d+\]|byte offset \d+`)

func FuzzLoad(f *testing.F) {
	whole, err := json.Marshal(fixture.File())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(whole)
	f.Add([]byte(`{"workspaces":[{"id":"ws_a","ID":"ws_b"}]}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`{"recordings":[{"id":"rec_1","steps":["a",null],"title":"\ud800"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d1, err1 := dataset.Load(bytes.NewReader(b))
		d2, err2 := dataset.Load(iotest.OneByteReader(bytes.NewReader(b)))
		switch {
		case (err1 == nil) != (err2 == nil):
			t.Fatalf("whole: %v; byte by byte: %v", err1, err2)
		case err1 != nil && where(err1) != where(err2):
			t.Fatalf("messages differ:\nwhole:        %v\nbyte by byte: %v", err1, err2)
		case err1 == nil:
			j1, _ := json.Marshal(d1)
			j2, _ := json.Marshal(d2)
			if !bytes.Equal(j1, j2) {
				t.Fatal("the data differ between reading whole and byte by byte")
			}
		}
	})
}
