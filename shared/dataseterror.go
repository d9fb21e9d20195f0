package doclib

import (
	"fmt"
	"strings"
)

// DataSetError lists the problems that made a data set unacceptable, whole:
// Load's for a data set wrong in itself, and an importer's (dynamo) for one that
// cannot go into its store. One type, so that a caller tells a refused data set
// from a failure by one errors.As, whichever step refused it. Each problem names
// the item, e.g. `documents[3] (doc_x): libraryId "lib_y" does not exist`.
type DataSetError struct {
	// Reason starts the message: what refused the data set and that nothing
	// changed ("the data set does not fit DynamoDB, nothing was written"). ""
	// is Load's "data set rejected, nothing was loaded".
	Reason   string
	Problems []string
	// More counts problems found beyond those listed.
	More int
}

func (e *DataSetError) Error() string {
	var b strings.Builder
	reason := e.Reason
	if reason == "" {
		reason = "data set rejected, nothing was loaded"
	}
	n := len(e.Problems) + e.More
	fmt.Fprintf(&b, "%s: %d problem", reason, n)
	if n != 1 {
		b.WriteString("s")
	}
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.More)
	}
	return b.String()
}
