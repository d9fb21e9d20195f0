package indexer_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/search"
)

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	search.Embedder
	texts atomic.Int64
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	return e.Embedder.Embed(ctx, texts)
}

func count(reqs []string, req string) int {
	n := 0
	for _, r := range reqs {
		if r == req {
			n++
		}
	}
	return n
}

// TestWarmIndexerChecksTheIndexAgain: a reindex may swap the alias to an
// index of another embedder while an indexer container is warm. The indexer
// checks the index behind the alias again before it embeds and writes, at
// most every CheckEvery while the check passes; on a mismatch it writes no
// vector and fails the records that would, until the alias holds an index of
// its embedder again. Deletions go ahead.
func TestWarmIndexerChecksTheIndexAgain(t *testing.T) {
	ctx := context.Background()
	cluster := fakeopensearch.Start(t)
	e := &countingEmbedder{Embedder: hashing(t)}
	b, err := opensearch.New(opensearch.Config{URL: cluster.URL, Dimensions: e.Dimensions(), Embedder: e.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnsureIndex(ctx); err != nil { // the cold start
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	x := newIndexer(t, world(), b)
	x.Embedder = e
	x.Recheck.Now = func() time.Time { return clock }
	x.CheckIndex = func(ctx context.Context) error { _, err := b.EnsureIndex(ctx); return err }
	mapping := "GET /" + b.Alias() + "/_mapping"

	insert := load(t, "dynamodb-insert-document.json") // doc_it_007
	if failed := handle(t, x, insert); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	if got := cluster.Indexed(b.Alias()); !slices.Equal(got, []string{"doc_it_007"}) {
		t.Fatalf("indexed %v", got)
	}
	if n := count(cluster.Requests(), mapping); n != 2 {
		t.Errorf("%d mapping reads, want the cold start's and one before the first write", n)
	}
	clock = clock.Add(search.IndexCheckEvery - time.Second)
	handle(t, x, load(t, "dynamodb-modify-document.json"))
	if n := count(cluster.Requests(), mapping); n != 2 {
		t.Errorf("%d mapping reads: a passed check is trusted for %s", n, search.IndexCheckEvery)
	}

	// doclib-admin reindex with another embedder swaps the alias.
	cluster.CreateIndex("doclib-documents-other", b.Alias(), map[string]any{"embedder": "bedrock/amazon.titan-embed-text-v2:0/1024", "schema": 1})
	clock = clock.Add(2 * time.Second)
	embedded, bulks := e.texts.Load(), count(cluster.Requests(), "POST /_bulk")
	failed := handle(t, x, insert)
	if want := []string{insert.Records[0].Change.SequenceNumber}; !slices.Equal(failed, want) {
		t.Errorf("failed records %v, want %v: they must come back", failed, want)
	}
	if len(cluster.Indexed(b.Alias())) != 0 || count(cluster.Requests(), "POST /_bulk") != bulks || e.texts.Load() != embedded {
		t.Errorf("the indexer embedded or wrote for an index of another embedder: %v", cluster.Requests())
	}
	// A failed check is not trusted: every batch checks again.
	before := count(cluster.Requests(), mapping)
	handle(t, x, insert)
	if n := count(cluster.Requests(), mapping); n != before+1 {
		t.Errorf("%d mapping reads after a failed check, want %d", n, before+1)
	}
	// Deletions write no vector: they go ahead.
	if failed := handle(t, x, load(t, "dynamodb-remove-document.json")); len(failed) != 0 {
		t.Errorf("a deletion failed: %v", failed)
	}

	// A reindex with the indexer's embedder cures it at the next batch.
	if _, err := b.Reindex(ctx, nil, 0, func(func([]search.IndexDoc) error) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if failed := handle(t, x, insert); len(failed) != 0 {
		t.Fatalf("after the reindex: failed %v", failed)
	}
	if got := cluster.Indexed(b.Alias()); !slices.Equal(got, []string{"doc_it_007"}) {
		t.Errorf("indexed %v after the reindex", got)
	}
}

// TestCheckFailureIsLogged: the log says why nothing is written.
func TestCheckFailureIsLogged(t *testing.T) {
	var logs strings.Builder
	x := newIndexer(t, world(), newFakeIndex())
	x.Logger = slogTo(&logs)
	x.CheckIndex = func(context.Context) error { return errors.New("index of embedder \"other\": incompatible") }
	if failed := handle(t, x, load(t, "dynamodb-insert-document.json")); len(failed) != 1 {
		t.Errorf("failed %v", failed)
	}
	if !strings.Contains(logs.String(), "incompatible") || !strings.Contains(logs.String(), x.Embedder.ID()) {
		t.Errorf("log:\n%s", logs.String())
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
