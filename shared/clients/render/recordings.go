package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/doclib/doclib/shared/api"

	doclib "github.com/doclib/doclib/shared"
)

// Recordings writes a page of the recordings behind a document: how many are
// readable of how many exist, the API's guidance on any gap, then each
// recording (see Recording). An empty list is normal (recordings stay
// private until shared), so it says so rather than suggesting the document
// is unsupported.
func Recordings(w io.Writer, r *api.SourceRecordings) {
	switch {
	case r.LinkedTotal == 0:
		fmt.Fprintln(w, "No recordings are linked to this document.")
	case r.Total == 0 && r.LinkedTotal == 1:
		fmt.Fprintln(w, "The one recording behind this document cannot be read here.")
	case r.Total == 0:
		fmt.Fprintf(w, "None of the %d recordings behind this document can be read here.\n", r.LinkedTotal)
	case r.LinkedTotal == 1:
		fmt.Fprintln(w, "The one recording behind this document is shared.")
	case r.Guidance != "":
		// The guidance says how many are private, and why.
		fmt.Fprintf(w, "%d of the %d recordings behind this document %s shared.\n",
			r.Total, r.LinkedTotal, doclib.Plural(r.Total, "is", "are"))
	default:
		fmt.Fprintf(w, "%d of the %d recordings behind this document %s shared (%d private).\n",
			r.Total, r.LinkedTotal, doclib.Plural(r.Total, "is", "are"), r.PrivateTotal)
	}
	if r.Guidance != "" {
		item(w, "", r.Guidance)
	}
	// Said once: the API's guidance for recordings none of which can be
	// read already says that the document's content is the account.
	if r.Total == 0 && r.LinkedTotal > 0 && !strings.Contains(r.Guidance, "authoritative account") {
		fmt.Fprintln(w, "An empty list is normal: the document's own content is the authoritative account.")
	}
	for _, rec := range r.SourceRecordings {
		fmt.Fprintln(w)
		Recording(w, &rec)
	}
}

// Recording writes one recording: its title as a heading, its ID, status
// and date, its question-and-answer pairs and its steps (blank steps left
// out, the others numbered in order).
func Recording(w io.Writer, rec *api.SourceRecording) {
	fmt.Fprintf(w, "## %s\n", orUntitled(rec.Title))
	fmt.Fprintf(w, "%s · %s · recorded %s\n", Clean(rec.ID), Clean(rec.Status), stamp(rec.ClientCreatedAt))
	if len(rec.Questions) > 0 {
		fmt.Fprintln(w, "Questions:")
		for _, q := range rec.Questions {
			item(w, "- Q: ", orEmpty(q.Question))
			item(w, "  A: ", orEmpty(q.Response))
		}
	}
	var steps []string
	for _, s := range rec.Steps {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	if len(steps) > 0 {
		fmt.Fprintln(w, "Steps:")
		for i, s := range steps {
			item(w, fmt.Sprintf("%d. ", i+1), s)
		}
	}
}

// stamp is a timestamp to the minute in UTC, or "-" when the API sent none.
func stamp(t api.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// orEmpty marks a blank question or answer, which would otherwise leave a
// dangling "Q:" or "A:".
func orEmpty(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return "(empty)"
	}
	return s
}
