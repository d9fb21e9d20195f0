package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// bufferedLimit is what a buffered Lambda answer may carry (6 MB).
const bufferedLimit = 6 << 20

// TestBigAnswersDataSet holds the big-answers set (demo.BigAnswers) to what
// issue 24 made it for: a page of 100 documents, a depth-3 traversal and the
// graph are each over what a buffered Lambda answer may carry, whole and
// exact (the traversal reaches every document; the graph is not cut).
func TestBigAnswersDataSet(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB of data; not in -short")
	}
	var buf bytes.Buffer
	if err := demo.Encode(&buf, demo.BigAnswers(demo.BigOptions{})); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Load(&buf)
	if err != nil {
		t.Fatalf("the big-answers set does not load: %v", err)
	}
	h := httpapi.NewServer(httpapi.Config{Service: service.New(memory.New(d), nil)})
	get := func(path string, v any) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatal(err)
		}
		return rec.Body.Len()
	}
	var page api.DocumentPage
	n := get("/libraries/"+demo.BigLibrary+"/documents?pageSize=100", &page)
	if len(page.Documents) != 100 || n <= bufferedLimit {
		t.Errorf("page of 100: %d documents, %d bytes; want 100 and over %d", len(page.Documents), n, bufferedLimit)
	}
	pageBytes := n
	var tr api.Traversal
	n = get("/documents/doc_big_001/traverse?depth=3", &tr)
	sizes := []int{pageBytes, 0, 0}
	if len(tr.Nodes) != 160 || n <= bufferedLimit {
		t.Errorf("traversal: %d nodes, %d bytes; want all 160 and over %d", len(tr.Nodes), n, bufferedLimit)
	}
	sizes[1] = n
	var g api.Graph
	n = get("/libraries/"+demo.BigLibrary+"/graph", &g)
	if len(g.Documents) != 160 || len(g.Edges) != 160*31 || g.Truncated || n <= bufferedLimit {
		t.Errorf("graph: %d documents, %d edges, truncated %v, %d bytes; want 160, 4,960, false, over %d",
			len(g.Documents), len(g.Edges), g.Truncated, n, bufferedLimit)
	}
	sizes[2] = n
	t.Logf("bytes: page of 100 %d; traversal %d; graph %d", sizes[0], sizes[1], sizes[2])
}
