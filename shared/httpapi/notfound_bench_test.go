package httpapi_test

import (
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
)

// BenchmarkNotFound times the two 404s of GET /documents/{id} that a key
// limited to one library can meet: a document that does not exist, and one
// in a library outside its scope. Their answers are the same; their cost
// must be too, or the time would tell one from the other
// (TestOutOfScopeReadsAsMissing holds the reads equal). With
// DOCLIB_TEST_STORE=dynamodb it runs on dynalite (docs/performance.md).
func BenchmarkNotFound(b *testing.B) {
	s := newServer(b, options{noLimiter: true})
	for _, c := range []struct{ name, id string }{
		{"missing", "doc_a2_9"},
		{"out-of-scope", "doc_a2_1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := s.doAuth(b, "GET", "Bearer "+fixture.KeyOneLibrary, "/documents/"+c.id); r.status != 404 {
					b.Fatalf("GET /documents/%s: %d %s", c.id, r.status, r.body)
				}
			}
		})
	}
}
