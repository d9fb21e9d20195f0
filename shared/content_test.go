package doclib

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestContentStrings(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		fast bool // the scanner, not the fallback, reads it
	}{
		{`{}`, []string{}, true},
		{`{"summary":"Reset it.","steps":["Open Okta","Directory > People"]}`, []string{"Reset it.", "Open Okta", "Directory > People"}, true},
		{`{"a":[],"b":"x"}`, []string{"x"}, true},
		{` { "a" : [ "x" , "y" ] , "b" : "z" } `, []string{"x", "y", "z"}, true},
		{`{"a":"quote \" and \\ and \u00e9 and \ud83d\ude00","b":["tab\there"]}`, []string{"quote \" and \\ and é and 😀", "tab\there"}, true},
		{`{"a":"café ✓"}`, []string{"café ✓"}, true},
		// Not the loader's form: numbers or nested objects fall back to the decoder,
		// which keeps the strings it can.
		{`{"a":1,"b":"x"}`, []string{"x"}, false},
		{`{"a":{"b":"c"},"d":["e"]}`, []string{"e"}, false},
		{`not json`, nil, false},
		{`{"a":"x"} trailing`, []string{"x"}, false},
	}
	for _, c := range cases {
		got := ContentStrings(json.RawMessage(c.in))
		if !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: got %q, want %q", c.in, got, c.want)
		}
		if _, ok := scanContent([]byte(c.in)); ok != c.fast {
			t.Errorf("%s: scanner ok=%v, want %v", c.in, ok, c.fast)
		}
	}
}

// FuzzContentStrings: for content built from any strings, the scanner and the
// decoder agree, in the loader's compact form and indented.
func FuzzContentStrings(f *testing.F) {
	f.Add("Reset a password", "Open Okta", "Directory > People")
	f.Add("quote \" back \\ slash", "\u2028", "\x00\x1f")
	f.Add("", "", "é😀")
	f.Add("\xff invalid utf-8", "a", "b")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		m := map[string]any{"summary": a, "steps": []string{b, c}, "notes": []string{}}
		compact, err := json.Marshal(m)
		if err != nil {
			t.Skip()
		}
		indented, _ := json.MarshalIndent(m, "", "  ")
		want := decodeContent(compact)
		for _, in := range [][]byte{compact, indented} {
			got, ok := scanContent(in)
			if !ok {
				t.Fatalf("scanner refused valid content %s", in)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: scanner %q, decoder %q", in, got, want)
			}
		}
	})
}
