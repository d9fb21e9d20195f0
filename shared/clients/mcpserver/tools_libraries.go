package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/render"

	doclib "github.com/doclib/doclib/shared"
)

// listLibrariesInput takes nothing.
type listLibrariesInput struct{}

// getLibraryInput names a library and which label lists to fetch.
type getLibraryInput struct {
	Library string   `json:"library" jsonschema:"the library's lib_… ID, from list_libraries; a library slug the user gives you works too, but list_libraries does not return slugs"`
	Include []string `json:"include,omitempty" jsonschema:"which label lists to include, each with document counts: tags, categories, applications (default: all three)"`
}

// getLibraryOutput is a library with the label lists asked for; a list that
// was not asked for is absent, one that was is present even when empty.
type getLibraryOutput struct {
	Library      api.Library `json:"library"`
	Tags         []api.Label `json:"tags,omitzero" jsonschema:"the values the tag filter accepts, with document counts"`
	Categories   []api.Label `json:"categories,omitzero" jsonschema:"the values the category filter accepts, with document counts"`
	Applications []api.Label `json:"applications,omitzero" jsonschema:"the values the application filter accepts, with document counts"`
}

var labelKinds = []string{"tags", "categories", "applications"}

func (t *tools) addLibraryTools(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{
		Name:  "list_libraries",
		Title: "List libraries",
		Description: `List every document library this API key can see: ID (lib_…), name, description, document count, and the categories and tags its documents use.

Call this first to learn the library IDs that list_documents, get_library and search_documents' libraryId filter take, and to see which libraries exist before searching. An empty list means the key sees no library.`,
		Annotations:  readOnly("List libraries"),
		InputSchema:  inputSchema[listLibrariesInput](nil),
		OutputSchema: outputSchema[api.LibraryList](),
	}, t.listLibraries)

	addTool(t, s, &mcp.Tool{
		Name:  "get_library",
		Title: "Get a library and its labels",
		Description: `Get one library by its lib_… ID (or by a slug the user gave you), with its edge count and its tags, categories and applications, each with how many documents carry it.

Use it to choose filter values: the names returned are exactly what the category, tag and application filters of list_documents and search_documents accept. Call list_libraries first if you do not know the library's ID.`,
		Annotations: readOnly("Get a library and its labels"),
		InputSchema: inputSchema[getLibraryInput](func(p map[string]*jsonschema.Schema) {
			p["library"].MinLength = ptr(1)
			p["include"].Items.Enum = []any{"tags", "categories", "applications"}
			p["include"].UniqueItems = true
		}),
		OutputSchema: outputSchema[getLibraryOutput](),
	}, t.getLibrary)
}

func (t *tools) listLibraries(ctx context.Context, _ *mcp.CallToolRequest, _ listLibrariesInput) (*mcp.CallToolResult, *api.LibraryList, error) {
	libs, err := t.client(ctx).Libraries(ctx)
	if err != nil {
		return nil, nil, t.toolError(ctx, "list_libraries", err)
	}
	libs.Libraries = nonNil(libs.Libraries)
	for i := range libs.Libraries {
		libs.Libraries[i].Categories = nonNil(libs.Libraries[i].Categories)
		libs.Libraries[i].Tags = nonNil(libs.Libraries[i].Tags)
	}
	var b strings.Builder
	if len(libs.Libraries) == 0 {
		b.WriteString("This API key sees no library.\n")
	} else {
		fmt.Fprintf(&b, "%d %s visible to this API key:\n", len(libs.Libraries), doclib.Plural(len(libs.Libraries), "library", "libraries"))
	}
	for _, l := range libs.Libraries {
		fmt.Fprintf(&b, "\n## %s (%s)\n%s", render.Clean(l.Name), render.Clean(l.ID), count(l.DocumentCount, "document", "documents"))
		if l.Description != "" {
			fmt.Fprintf(&b, " · %s", render.Clean(l.Description))
		}
		b.WriteString("\n")
		if len(l.Categories) > 0 {
			fmt.Fprintf(&b, "Categories: %s\n", list(l.Categories))
		}
		if len(l.Tags) > 0 {
			fmt.Fprintf(&b, "Tags: %s\n", list(l.Tags))
		}
	}
	if len(libs.Libraries) > 0 {
		b.WriteString("\nNext: search_documents to find documents by meaning, or list_documents / get_library with a library ID to browse.\n")
	}
	return textResult(b.String()), libs, nil
}

func (t *tools) getLibrary(ctx context.Context, _ *mcp.CallToolRequest, in getLibraryInput) (*mcp.CallToolResult, *getLibraryOutput, error) {
	include := in.Include
	if len(include) == 0 {
		include = labelKinds
	}
	lib, err := t.client(ctx).Library(ctx, in.Library)
	if err != nil {
		return nil, nil, t.toolError(ctx, "get_library", err)
	}
	// Label lists by the library's ID, so that a slug renamed between the
	// calls cannot make them disagree.
	out := &getLibraryOutput{Library: *lib}
	out.Library.Categories, out.Library.Tags = nonNil(lib.Categories), nonNil(lib.Tags)
	if slices.Contains(include, "tags") {
		r, err := t.client(ctx).Tags(ctx, lib.ID)
		if err != nil {
			return nil, nil, t.toolError(ctx, "get_library", err)
		}
		out.Tags = nonNil(r.Tags)
	}
	if slices.Contains(include, "categories") {
		r, err := t.client(ctx).Categories(ctx, lib.ID)
		if err != nil {
			return nil, nil, t.toolError(ctx, "get_library", err)
		}
		out.Categories = nonNil(r.Categories)
	}
	if slices.Contains(include, "applications") {
		r, err := t.client(ctx).Applications(ctx, lib.ID)
		if err != nil {
			return nil, nil, t.toolError(ctx, "get_library", err)
		}
		out.Applications = nonNil(r.Applications)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s)\n", render.Clean(lib.Name), render.Clean(lib.ID))
	if lib.Description != "" {
		fmt.Fprintf(&b, "%s\n", render.Clean(lib.Description))
	}
	b.WriteString(count(lib.DocumentCount, "document", "documents"))
	if lib.EdgeCount != nil {
		fmt.Fprintf(&b, ", %s between them", count(*lib.EdgeCount, "edge", "edges"))
	}
	fmt.Fprintf(&b, "; updated %s\n", day(lib.UpdatedAt))
	for _, l := range []struct {
		name string
		ls   []api.Label
		on   bool
	}{{"Categories", out.Categories, out.Categories != nil}, {"Tags", out.Tags, out.Tags != nil}, {"Applications", out.Applications, out.Applications != nil}} {
		switch {
		case !l.on:
		case len(l.ls) == 0:
			fmt.Fprintf(&b, "\n## %s\n(none)\n", l.name)
		default:
			fmt.Fprintf(&b, "\n## %s (documents each)\n%s\n", l.name, labels(l.ls))
		}
	}
	b.WriteString("\nPass these names as the category, tag or application filter of list_documents or search_documents.\n")
	return textResult(b.String()), out, nil
}
