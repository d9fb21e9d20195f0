// Package render writes the API's answers as text for people and agents: a
// document's content section by section in its template's order, with its
// facts and its edges. The doclib CLI and the MCP server both use it, so a
// document reads the same in a terminal and in an agent's context.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/api"

	doclib "github.com/doclib/doclib/shared"
)

// Content writes a document's content in the order of its template's
// sections, each under its title: a text section as its paragraph(s), a steps
// section as a numbered list, a list section as bullets. Sections the content
// leaves out or empty are skipped, and so are blank items of a list, which
// is numbered over the items shown; keys the template does not know are
// written last, under their key, so nothing the API sent is lost. Text is
// cleaned of control characters (see CleanText), and a content line that
// starts with '#' is escaped as \# so that it cannot pass for a section's
// heading. Content that is not a JSON object is an error: Document shows it
// as sent instead.
func Content(w io.Writer, content json.RawMessage, schema api.Schema) error {
	_, err := writeContent(w, content, schema)
	return err
}

// writeContent is Content, also saying whether it wrote any section.
func writeContent(w io.Writer, content json.RawMessage, schema api.Schema) (bool, error) {
	var fields map[string]json.RawMessage
	if len(content) > 0 {
		if err := json.Unmarshal(content, &fields); err != nil {
			return false, fmt.Errorf("render: the content is not a JSON object: %w", err)
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
		fmt.Fprintf(w, "## %s\n", Clean(title))
		if text != "" {
			item(w, "", text)
		}
		for i, it := range items {
			if typ == "steps" {
				item(w, fmt.Sprintf("%d. ", i+1), it)
			} else {
				item(w, "- ", it)
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
	return !first, nil
}

// value reads a section's value: a string, or an array of strings without
// its blank items (other JSON is written as it came).
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
		shown := items[:0]
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" {
				shown = append(shown, it)
			}
		}
		return "", shown
	}
	return string(raw), nil
}

// item writes text cleaned, its first line after marker and the others
// indented to line up under it, with a leading '#' escaped on every line.
func item(w io.Writer, marker, text string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(marker))
	for i, line := range strings.Split(CleanText(text), "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case i == 0:
			fmt.Fprintf(w, "%s%s\n", marker, escapeHeading(line))
		case line == "":
			fmt.Fprintln(w)
		default:
			fmt.Fprintf(w, "%s%s\n", indent, escapeHeading(line))
		}
	}
}

// escapeHeading escapes a line's leading '#' the way Markdown does, as \#,
// so that a line of content such as "## Steps" reads as text, not as the
// start of a section.
func escapeHeading(line string) string {
	rest := strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(rest, "#") {
		return line
	}
	return line[:len(line)-len(rest)] + `\` + rest
}

// rawContent writes content that is not the JSON object its template
// expects as it came, after a note saying so: a string as its text, other
// JSON indented.
func rawContent(w io.Writer, content json.RawMessage) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		fmt.Fprintln(w, "(The content is a string, not the sections its template expects; shown as sent.)")
		item(w, "", strings.TrimSpace(s))
		return
	}
	fmt.Fprintln(w, "(The content is not the JSON object its template expects; shown as sent.)")
	var b bytes.Buffer
	if json.Indent(&b, content, "", "  ") != nil {
		b.Reset()
		b.Write(content)
	}
	item(w, "", b.String())
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Document writes a document: title, its facts, its content in template
// order (a notice when it has none, and the content as sent when it is not a
// JSON object), and its edges in scope.
func Document(w io.Writer, d *api.Document) error {
	fmt.Fprintf(w, "# %s\n", orUntitled(d.Title))
	fmt.Fprintf(w, "ID: %s · Library: %s (%s)\n", Clean(d.ID), Clean(d.Library.Name), Clean(d.Library.ID))
	facts := []string{}
	if d.Category != "" {
		facts = append(facts, "Category: "+Clean(d.Category))
	}
	if len(d.Tags) > 0 {
		facts = append(facts, "Tags: "+strings.Join(cleanAll(d.Tags), ", "))
	}
	if len(d.Applications) > 0 {
		facts = append(facts, "Applications: "+strings.Join(cleanAll(d.Applications), ", "))
	}
	if len(facts) > 0 {
		fmt.Fprintln(w, strings.Join(facts, " · "))
	}
	fmt.Fprintf(w, "Recorded %d %s on %d %s, last seen %s; updated %s\n\n",
		d.RecordingCount, doclib.Plural(d.RecordingCount, "time", "times"), d.DeviceCount, doclib.Plural(d.DeviceCount, "device", "devices"),
		day(d.LastSeen), day(d.UpdatedAt))
	var body bytes.Buffer
	wrote, err := writeContent(&body, d.Content, d.Schema)
	switch {
	case err != nil:
		rawContent(w, d.Content)
	case !wrote:
		fmt.Fprintln(w, "(this document has no content)")
	default:
		w.Write(body.Bytes())
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
			fmt.Fprintf(w, "- %s (%s): %s\n", orUntitled(o.TargetDocumentTitle), Clean(o.TargetDocumentID), EdgeNote(o.Label, o.EdgeType, o.Support, o.LowConfidence))
		}
	}
	if len(e.Incoming) > 0 {
		fmt.Fprintln(w, "\n## Before")
		for _, i := range e.Incoming {
			fmt.Fprintf(w, "- %s (%s): %s\n", orUntitled(i.SourceDocumentTitle), Clean(i.SourceDocumentID), EdgeNote(i.Label, i.EdgeType, i.Support, i.LowConfidence))
		}
	}
}

// EdgeNote describes an edge in a few words: its label, and either how many
// recordings show the link (a data edge, flagged when below the API's
// confidence threshold) or that the documents are related by meaning. The
// label is cleaned (see Clean).
func EdgeNote(label, edgeType string, support int, low bool) string {
	label = Clean(label)
	switch {
	case edgeType == "semantic":
		return label + ", related by meaning"
	case low:
		return fmt.Sprintf("%s, seen in %d %s (low confidence)", label, support, doclib.Plural(support, "recording", "recordings"))
	}
	return fmt.Sprintf("%s, seen in %d %s", label, support, doclib.Plural(support, "recording", "recordings"))
}

// day is a timestamp's date, or "-" when the API sent none (as the CLI's
// tables write it), rather than 0001-01-01.
func day(t api.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02")
}

// orUntitled is a title cleaned, or "(untitled)" when it is blank, so that a
// heading or a line is never left empty.
func orUntitled(title string) string {
	if strings.TrimSpace(title) == "" {
		return "(untitled)"
	}
	return Clean(title)
}

func cleanAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = Clean(v)
	}
	return out
}
