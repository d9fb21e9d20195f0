// Package render writes the API's answers as text for people and agents: a
// document's content section by section in its template's order, with its
// facts and its edges. The doclib CLI and the MCP server both use it, so a
// document reads the same in a terminal and in an agent's context.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/doclib/doclib/shared/api"
)

// Content writes a document's content in the order of its template's
// sections, each under its title: a text section as its paragraph(s), a steps
// section as a numbered list, a list section as bullets. Sections the content
// leaves out or empty are skipped; keys the template does not know are
// written last, under their key, so nothing the API sent is lost.
func Content(w io.Writer, content json.RawMessage, schema api.Schema) error {
	var fields map[string]json.RawMessage
	if len(content) > 0 {
		if err := json.Unmarshal(content, &fields); err != nil {
			return fmt.Errorf("render: the content is not a JSON object: %w", err)
		}
	}
	known := map[string]bool{}
	first := true
	section := func(title, typ string, raw json.RawMessage) {
		text, items := value(raw)
		if text == "" && len(items) == 0 {
			return
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		fmt.Fprintf(w, "## %s\n", title)
		if text != "" {
			fmt.Fprintln(w, text)
		}
		for i, it := range items {
			if typ == "steps" {
				fmt.Fprintf(w, "%d. %s\n", i+1, it)
			} else {
				fmt.Fprintf(w, "- %s\n", it)
			}
		}
	}
	for _, s := range schema.Sections {
		known[s.Key] = true
		title := s.Title
		if title == "" {
			title = s.Key
		}
		section(title, s.Type, fields[s.Key])
	}
	var extra []string
	for k := range fields {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sortStrings(extra)
	for _, k := range extra {
		section(k, "list", fields[k])
	}
	return nil
}

// value reads a section's value: a string, or an array of strings (other
// JSON is written as it came).
func value(raw json.RawMessage) (string, []string) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), nil
	}
	var items []string
	if json.Unmarshal(raw, &items) == nil {
		return "", items
	}
	return string(raw), nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Document writes a document: title, its facts, its content in template
// order, and its edges in scope.
func Document(w io.Writer, d *api.Document) error {
	fmt.Fprintf(w, "# %s\n", d.Title)
	fmt.Fprintf(w, "ID: %s · Library: %s (%s)\n", d.ID, d.Library.Name, d.Library.ID)
	facts := []string{}
	if d.Category != "" {
		facts = append(facts, "Category: "+d.Category)
	}
	if len(d.Tags) > 0 {
		facts = append(facts, "Tags: "+strings.Join(d.Tags, ", "))
	}
	if len(d.Applications) > 0 {
		facts = append(facts, "Applications: "+strings.Join(d.Applications, ", "))
	}
	if len(facts) > 0 {
		fmt.Fprintln(w, strings.Join(facts, " · "))
	}
	fmt.Fprintf(w, "Recorded %d times on %d devices, last seen %s; updated %s\n\n", d.RecordingCount, d.DeviceCount,
		d.LastSeen.Format("2006-01-02"), d.UpdatedAt.Format("2006-01-02"))
	if err := Content(w, d.Content, d.Schema); err != nil {
		return err
	}
	Edges(w, d.Edges)
	return nil
}

// Edges writes a document's edges: where people go next, and where they come
// from, with each edge's label and support.
func Edges(w io.Writer, e api.Edges) {
	if len(e.Outgoing) > 0 {
		fmt.Fprintln(w, "\n## Next")
		for _, o := range e.Outgoing {
			fmt.Fprintf(w, "- %s (%s): %s\n", o.TargetDocumentTitle, o.TargetDocumentID, EdgeNote(o.Label, o.EdgeType, o.Support, o.LowConfidence))
		}
	}
	if len(e.Incoming) > 0 {
		fmt.Fprintln(w, "\n## Before")
		for _, i := range e.Incoming {
			fmt.Fprintf(w, "- %s (%s): %s\n", i.SourceDocumentTitle, i.SourceDocumentID, EdgeNote(i.Label, i.EdgeType, i.Support, i.LowConfidence))
		}
	}
}

// EdgeNote describes an edge in a few words: its label, and either how many
// recordings show the link (a data edge, flagged when below the API's
// confidence threshold) or that the documents are related by meaning.
func EdgeNote(label, edgeType string, support int, low bool) string {
	switch {
	case edgeType == "semantic":
		return label + ", related by meaning"
	case low:
		return fmt.Sprintf("%s, seen in %d %s (low confidence)", label, support, plural(support, "recording", "recordings"))
	}
	return fmt.Sprintf("%s, seen in %d %s", label, support, plural(support, "recording", "recordings"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
