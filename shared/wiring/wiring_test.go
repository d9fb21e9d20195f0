package wiring

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/settings"
)

func TestEmbedder(t *testing.T) {
	ctx := context.Background()
	e, err := Embedder(ctx, settings.Embedder{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.ID(), "hash") {
		t.Errorf("default embedder is %q, want the offline hashing one", e.ID())
	}
	for _, c := range []struct {
		e    settings.Embedder
		want string
	}{
		{settings.Embedder{Kind: "word2vec"}, `not "word2vec"`},
		{settings.Embedder{Kind: "openai", Model: "m"}, "needs a URL and a model"},
		{settings.Embedder{Kind: "openai", URL: "http://x"}, "needs a URL and a model"},
		{settings.Embedder{Kind: "hash", Dimensions: -1}, "0 (the model's default) or more"},
	} {
		_, err := Embedder(ctx, c.e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.e, err, c.want)
		}
	}
}

func TestOpenSearchNeedsURL(t *testing.T) {
	e, err := Embedder(context.Background(), settings.Embedder{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSearch(context.Background(), settings.OpenSearch{}, e); err == nil || !strings.Contains(err.Error(), "--opensearch-url") {
		t.Errorf("error %v, want one asking for the URL", err)
	}
	if _, err := OpenSearch(context.Background(), settings.OpenSearch{URL: "http://x", AWSService: "s3"}, e); err == nil {
		t.Error("AWS service s3 accepted")
	}
	b, err := OpenSearch(context.Background(), settings.OpenSearch{URL: "http://localhost:9"}, e)
	if err != nil || b == nil {
		t.Fatalf("backend %v, error %v", b, err)
	}
}

// TestSnapshotFollowerTakesTheSettings: the search function's follower
// opens by range and prefetches as the settings say.
func TestSnapshotFollowerTakesTheSettings(t *testing.T) {
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := settings.Snapshots{Poll: time.Second, CacheMB: 3, MemoryMB: 2048, ReadWholeBelow: -1, NoPrefetch: true}
	f, err := SnapshotFollower(context.Background(), snapshot.NewMemory(), s, e, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if f.ReadWholeBelow != -1 || !f.NoPrefetch || f.CacheBytes != 3<<20 || f.MemoryBytes != 2048<<20 || f.Every != time.Second {
		t.Errorf("the follower of %+v: %+v", s, f)
	}
}

// TestMemoryLimit: the search function sets a Go memory limit at nine
// tenths of Lambda's memory, none outside Lambda, and none over GOMEMLIMIT.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		memoryMB int
		env      string
		want     int64
		ok       bool
	}{
		{2048, "", 2048 << 20 / 10 * 9, true},
		{10240, "", 10240 << 20 / 10 * 9, true},
		{0, "", 0, false},
		{2048, "1GiB", 0, false},
	} {
		if got, ok := memoryLimit(c.memoryMB, c.env); got != c.want || ok != c.ok {
			t.Errorf("memoryLimit(%d, %q) = %d, %v; want %d, %v", c.memoryMB, c.env, got, ok, c.want, c.ok)
		}
	}
}

// TestGCHeadroom: the search function sizes the collector to its index
// unless GOGC is set, which the Go runtime has read already.
func TestGCHeadroom(t *testing.T) {
	if got := gcHeadroom(""); got != snapshot.DefaultGCHeadroom || got <= 0 {
		t.Errorf("gcHeadroom(\"\") = %d, want %d", got, snapshot.DefaultGCHeadroom)
	}
	for _, env := range []string{"100", "50", "off"} {
		if got := gcHeadroom(env); got != 0 {
			t.Errorf("gcHeadroom(%q) = %d, want 0: GOGC is set", env, got)
		}
	}
}
