package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/render"

	doclib "github.com/doclib/doclib/shared"
)

// excerptLen bounds an excerpt: enough for an agent to judge a hit without
// filling its context with twenty whole documents.
const excerptLen = 280

// excerpt is the start of a document's content: its first text section (the
// summary in every demo template) or, failing that, the content rendered in
// template order, on one line, cleaned and cut at a word boundary. Content
// that is not a JSON object gives its own start: a string's text, or the
// JSON.
func excerpt(content json.RawMessage, schema api.Schema) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(content, &fields) == nil {
		for _, s := range schema.Sections {
			var text string
			if s.Type == "text" && json.Unmarshal(fields[s.Key], &text) == nil && strings.TrimSpace(text) != "" {
				return clip(text, excerptLen)
			}
		}
	}
	var b bytes.Buffer
	if render.Content(&b, content, schema) != nil {
		var text string
		if json.Unmarshal(content, &text) == nil {
			return clip(text, excerptLen)
		}
		return clip(string(content), excerptLen)
	}
	return clip(b.String(), excerptLen)
}

// clip joins s onto one line, cleaned of control characters, and cuts it to
// at most n runes, at a space where there is one, marking the cut with an
// ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(render.Clean(s)), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.") + "…"
}

// facts writes a document's category, tags and applications on one line, or
// nothing when it has none.
func facts(category string, tags, applications []string) string {
	var f []string
	if category != "" {
		f = append(f, "Category: "+render.Clean(category))
	}
	if len(tags) > 0 {
		f = append(f, "Tags: "+list(tags))
	}
	if len(applications) > 0 {
		f = append(f, "Applications: "+list(applications))
	}
	return strings.Join(f, " · ")
}

// labels writes label entries as "name (count)", comma-separated.
func labels(ls []api.Label) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s (%d)", render.Clean(l.Name), l.DocumentCount)
	}
	return strings.Join(parts, ", ")
}

// list writes strings from the data cleaned and comma-separated.
func list(s []string) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = render.Clean(v)
	}
	return strings.Join(parts, ", ")
}

// pageLine describes where a page sits in a paged answer, in words that can
// follow a colon; one and many are the noun in the singular and plural.
func pageLine(one, many string, n, total, page, pageSize int) string {
	switch {
	case total == 0:
		return "no " + many + "."
	case n == 0:
		return fmt.Sprintf("page %d is past the end: there %s %d %s (%d per page).", page, doclib.Plural(total, "is", "are"), total,
			doclib.Plural(total, one, many), pageSize)
	case total == 1 && page == 1:
		return "1 " + one + "."
	}
	first := (page-1)*pageSize + 1
	var s string
	if n == 1 {
		s = fmt.Sprintf("%s %d of %d (page %d, %d per page).", one, first, total, page, pageSize)
	} else {
		s = fmt.Sprintf("%s %d–%d of %d (page %d, %d per page).", many, first, first+n-1, total, page, pageSize)
	}
	if first+n-1 < total {
		s += fmt.Sprintf(" More on page %d.", page+1)
	}
	return s
}

// day is a timestamp's date, or "-" when the API sent none.
func day(t api.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02")
}

// count writes n with its noun in the singular or plural.
func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, doclib.Plural(n, one, many))
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// nonNil keeps a list that will be validated against an array schema from
// encoding as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
