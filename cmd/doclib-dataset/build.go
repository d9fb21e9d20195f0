package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

// doc is one document as read from a Markdown file or CSV rows.
type doc struct {
	where              string // the file (and line) it came from, for messages
	library, title     string
	category, summary  string
	tags, applications []string
	steps              []string
}

// options are what the command line adds to the documents.
type options struct {
	workspaceID, workspaceName string
	noKey                      bool
	at                         time.Time // every timestamp of the data set
}

// defaultCategory is a document's category when its source gives none.
const defaultCategory = "General"

// build makes the data set: one workspace, one device, a library per library
// name, the documents with a summary and steps, and a key with a new random
// secret unless o.noKey. It is validated as the server would load it, and a
// problem names the file a document came from.
func build(docs []doc, o options) (*dataset.File, error) {
	if len(docs) == 0 {
		return nil, errors.New("no documents found")
	}
	at := o.at.Format(time.RFC3339)
	f := &dataset.File{
		Workspaces: []dataset.Workspace{{ID: o.workspaceID, Name: o.workspaceName, Plan: "team", AICredit: 1000, Subscription: "active"}},
		Devices:    []dataset.Device{{ID: "dev_local", WorkspaceID: o.workspaceID, Status: "active"}},
	}
	libIndex := map[string]int{}
	libIDs := map[string]int{}
	docSlugs := map[string]bool{}
	// sources[i] are the documents behind library i, for messages.
	var sources [][]doc
	var clashes []string
	for _, d := range docs {
		li, ok := libIndex[d.library]
		if !ok {
			li = len(f.Libraries)
			libIndex[d.library] = li
			slug := slugify(d.library, 100, "library")
			id := "lib_" + clip(slug, 64)
			if other, taken := libIDs[id]; taken {
				first := sources[other][0]
				clashes = append(clashes, fmt.Sprintf("%s: its library %q and the library %q of %s both make the library id %s (names differ only in case, spaces or punctuation): give them one name (the front matter's library:, or the folder's name)",
					d.where, d.library, first.library, first.where, id))
			}
			libIDs[id] = li
			sources = append(sources, nil)
			f.Libraries = append(f.Libraries, dataset.Library{ID: id, WorkspaceID: o.workspaceID,
				Name: d.library, Slug: slug, CreatedAt: at, UpdatedAt: at,
				Schema: dataset.Schema{Version: 1, Sections: []dataset.Section{
					{Key: "summary", Title: "Summary", Type: doclib.SectionText},
					{Key: "steps", Title: "Steps", Type: doclib.SectionSteps}}}})
		}
		sources[li] = append(sources[li], d)
		lib := &f.Libraries[li]
		slug := unique(slugify(d.title, 190, "document"), lib.ID+"/", docSlugs)
		steps := make([]any, len(d.steps)) // as the loader reads JSON, which Validate expects
		for i, s := range d.steps {
			steps[i] = s
		}
		content := map[string]any{"steps": steps}
		if d.summary != "" {
			content["summary"] = d.summary
		}
		category := d.category
		if category == "" {
			category = defaultCategory
		}
		f.Documents = append(f.Documents, dataset.Document{ID: fmt.Sprintf("doc_%s_%03d", clip(lib.Slug, 56), len(f.Documents)+1),
			LibraryID: lib.ID, Slug: slug, Title: d.title, Category: category, Tags: nonNil(d.tags), Applications: nonNil(d.applications),
			FirstSeen: at, LastSeen: at, CreatedAt: at, UpdatedAt: at, Content: content})
	}
	if !o.noKey {
		secret := make([]byte, 24)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("cannot make a random key secret: %w", err)
		}
		f.APIKeys = []dataset.APIKey{{ID: "key_local", WorkspaceID: o.workspaceID, DeviceID: "dev_local",
			Secret: "dlk_" + hex.EncodeToString(secret), Libraries: []string{"*"}, RecordingDetails: true}}
	}
	if len(clashes) > 0 {
		return nil, &doclib.DataSetError{Reason: "the documents do not make a valid data set, nothing was written", Problems: clashes}
	}
	if _, err := dataset.Validate(f); err != nil {
		return nil, withSources(err, docs, sources)
	}
	return f, nil
}

var (
	documentItem = regexp.MustCompile(`^documents\[(\d+)\]`)
	libraryItem  = regexp.MustCompile(`^libraries\[(\d+)\]`)
	optionItem   = regexp.MustCompile(`^(workspaces|devices|apiKeys)\[\d+\]`)
)

// withSources adds to each problem the files it came from: a document's
// file, the files of a library's documents, or for what the command makes
// itself (the workspace, its device and key) the options that name it.
func withSources(err error, docs []doc, sources [][]doc) error {
	var ve *doclib.DataSetError
	if !errors.As(err, &ve) {
		return err
	}
	out := *ve
	out.Reason = "the documents do not make a valid data set, nothing was written"
	out.Problems = nil
	for _, p := range ve.Problems {
		if m := documentItem.FindStringSubmatch(p); m != nil {
			if i, _ := strconv.Atoi(m[1]); i < len(docs) {
				p = docs[i].where + ": " + p
			}
		} else if m := libraryItem.FindStringSubmatch(p); m != nil {
			if i, _ := strconv.Atoi(m[1]); i < len(sources) && len(sources[i]) > 0 {
				p = libraryFiles(sources[i]) + ": " + p
			}
		} else if optionItem.MatchString(p) {
			p = "--workspace, --workspace-name (the workspace, device and key this command makes): " + p
		}
		out.Problems = append(out.Problems, p)
	}
	return &out
}

// libraryFiles names the files a library was made from: the first three,
// and how many more.
func libraryFiles(docs []doc) string {
	var names []string
	for i, d := range docs {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(docs)-3))
			break
		}
		names = append(names, d.where)
	}
	return "the library of " + strings.Join(names, ", ")
}

// write writes the data set as indented JSON to path, or to stdout. An
// existing file is replaced only with force, and then whole or not at all.
func write(f *dataset.File, path string, force bool, stdout, stderr io.Writer, o options) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return err
	}
	where := "standard output"
	if path == "" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return err
		}
	} else {
		where = path
		if err := writeFile(path, b.Bytes(), force); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "Wrote %s and %s to %s.\n", doclib.Count(len(f.Libraries), "library", "libraries"), doclib.Count(len(f.Documents), "document", "documents"), where)
	if !o.noKey {
		fmt.Fprintln(stderr, "Its key key_local has a new random secret (apiKeys[0].secret), written nowhere else: keep the file private.")
	}
	if path != "" {
		fmt.Fprintf(stderr, "Serve it with: go run ./cmd/doclib-server --data %s\n", path)
		if !o.noKey {
			fmt.Fprintf(stderr, "Its key, for Authorization: Bearer <key>: export DOCLIB_API_KEY=$(jq -r '.apiKeys[0].secret' %s)\n", path)
		}
	}
	return nil
}

// exists refuses path when it is there (a file, a folder or a link) and
// force is not set.
func exists(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists; pass --force to replace it, or give another --out", path)
	}
	return nil
}

// writeFile writes data to path, readable by its owner only (it may hold a
// live key), whole or not at all; an existing path is refused unless force.
func writeFile(path string, data []byte, force bool) error {
	err := dataset.WriteFile(path, 0o600, force, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return exists(path, false)
	}
	return err
}

// slugify is dataset.Slugify, or kind when nothing of the name is left.
func slugify(name string, max int, kind string) string {
	if s := dataset.Slugify(name, max); s != "" {
		return s
	}
	return kind
}

// unique returns slug, or slug-2, slug-3... when scope+slug is taken.
func unique(slug, scope string, taken map[string]bool) string {
	s := slug
	for n := 2; taken[scope+s]; n++ {
		s = fmt.Sprintf("%s-%d", slug, n)
	}
	taken[scope+s] = true
	return s
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// nonNil writes an empty list as [] rather than null.
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
