package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/render"
)

// excerptLen bounds an excerpt: enough for an agent to judge a hit without
// filling its context with twenty whole documents.
const excerptLen = 280

// excerpt is the start of a document's content: its first text section (the
// summary in every demo template) or, failing that, the content rendered in
// template order, on one line and cut at a word boundary.
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
		return ""
	}
	return clip(b.String(), excerptLen)
}

// clip joins s onto one line and cuts it to at most n runes, at a space
// where there is one, marking the cut with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
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
		f = append(f, "Category: "+category)
	}
	if len(tags) > 0 {
		f = append(f, "Tags: "+strings.Join(tags, ", "))
	}
	if len(applications) > 0 {
		f = append(f, "Applications: "+strings.Join(applications, ", "))
	}
	return strings.Join(f, " · ")
}

// labels writes label entries as "name (count)", comma-separated.
func labels(ls []api.Label) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s (%d)", l.Name, l.DocumentCount)
	}
	return strings.Join(parts, ", ")
}

// pageLine describes where a page sits in a paged answer, in words that can
// follow a colon.
func pageLine(noun string, n, total, page, pageSize int) string {
	if total == 0 {
		return "no " + noun + "."
	}
	if n == 0 {
		return fmt.Sprintf("page %d is past the end: there are %d %s (%d per page).", page, total, noun, pageSize)
	}
	first := (page-1)*pageSize + 1
	s := fmt.Sprintf("%s %d–%d of %d (page %d, %d per page).", noun, first, first+n-1, total, page, pageSize)
	if first+n-1 < total {
		s += fmt.Sprintf(" More on page %d.", page+1)
	}
	return s
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
