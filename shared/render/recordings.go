package render

import (
	"fmt"
	"io"

	"github.com/doclib/doclib/shared/api"
)

// Recordings writes a page of the recordings behind a document: how many are
// readable of how many exist, the API's guidance on any gap, then each
// recording with its question-and-answer pairs and its steps. An empty list
// is normal (recordings stay private until shared), so it says so rather than
// suggesting the document is unsupported.
func Recordings(w io.Writer, r *api.SourceRecordings) {
	switch {
	case r.LinkedTotal == 0:
		fmt.Fprintln(w, "No recordings are linked to this document.")
	case r.Total == 0:
		fmt.Fprintf(w, "None of the %d %s behind this document can be read here.\n",
			r.LinkedTotal, plural(r.LinkedTotal, "recording", "recordings"))
	default:
		fmt.Fprintf(w, "%d of the %d %s behind this document %s shared (%d private).\n",
			r.Total, r.LinkedTotal, plural(r.LinkedTotal, "recording", "recordings"), plural(r.Total, "is", "are"), r.PrivateTotal)
	}
	if r.Guidance != "" {
		fmt.Fprintln(w, r.Guidance)
	}
	if r.Total == 0 && r.LinkedTotal > 0 {
		fmt.Fprintln(w, "An empty list is normal: the document's own content is the authoritative account.")
	}
	for _, rec := range r.SourceRecordings {
		fmt.Fprintf(w, "\n## %s\n", rec.Title)
		fmt.Fprintf(w, "%s · %s · recorded %s\n", rec.ID, rec.Status, rec.ClientCreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
		if len(rec.Questions) > 0 {
			fmt.Fprintln(w, "Questions:")
			for _, q := range rec.Questions {
				fmt.Fprintf(w, "- Q: %s\n  A: %s\n", q.Question, q.Response)
			}
		}
		if len(rec.Steps) > 0 {
			fmt.Fprintln(w, "Steps:")
			for i, s := range rec.Steps {
				fmt.Fprintf(w, "%d. %s\n", i+1, s)
			}
		}
	}
}
