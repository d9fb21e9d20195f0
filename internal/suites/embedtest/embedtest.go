// Package embedtest holds the fixtures that the tests of the network embedders
// (shared/backend/bedrock, shared/backend/openai) share: the vectors their
// fake servers answer, the texts they send, and a recorder of the backoff
// sleeps, so that both packages' tests mean the same by them.
package embedtest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// RawVector is the deterministic, deliberately unnormalised vector a fake
// server returns for text.
func RawVector(text string, dims int) []float64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 7))
	v := make([]float64, dims)
	for i := range v {
		v[i] = 50 * (r.Float64() - 0.3)
	}
	return v
}

// Unit is RawVector normalised, what an Embedder should return.
func Unit(text string, dims int) []float32 {
	raw := RawVector(text, dims)
	v := make([]float32, dims)
	for i, x := range raw {
		v[i] = float32(x)
	}
	search.Normalize(v)
	return v
}

// Texts are n distinct texts, "text number 000" onwards.
func Texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %03d", i)
	}
	return out
}

// Norm is the Euclidean length of v.
func Norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Sleeps records the sleeps an Embedder asks for instead of sleeping them.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns at once, with ctx's error: it stands in for an
// Embedder's sleep function.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// All returns the sleeps recorded so far.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

// CheckLive embeds two paraphrases and an unrelated text with a real model, and
// checks that the vectors have unit length and that the paraphrases are the
// closest pair: the live tests' proof that the wiring reaches a model that
// knows meaning.
func CheckLive(ctx context.Context, t testing.TB, e search.Embedder) {
	t.Helper()
	vs, err := e.Embed(ctx, []string{
		"reset a user's password",
		"help someone who forgot their password",
		"approve a vendor invoice",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != e.Dimensions() || math.Abs(Norm(v)-1) > 1e-4 {
			t.Errorf("vector %d: %d dimensions, length %v", i, len(v), Norm(v))
		}
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	para, off1, off2 := dot(vs[0], vs[1]), dot(vs[0], vs[2]), dot(vs[1], vs[2])
	t.Logf("paraphrases %.3f, unrelated %.3f and %.3f", para, off1, off2)
	if para <= off1 || para <= off2 {
		t.Errorf("the paraphrases (%.3f) are not closer than the unrelated text (%.3f, %.3f)", para, off1, off2)
	}
}

// CheckCancelStopsInFlight cancels an Embed of six texts once the server,
// which holds every request, has seen the first: the call must end with
// context.Canceled (not search.ErrEmbedder) without sending another request
// or retrying, and the server must see each request it got cancelled.
// requests and cancelled read the server's counts.
func CheckCancelStopsInFlight(t testing.TB, e search.Embedder, requests, cancelled func() int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for requests() == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := e.Embed(ctx, Texts(6))
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if errors.Is(err, search.ErrEmbedder) {
		t.Errorf("a cancelled call wraps ErrEmbedder: %v", err)
	}
	sent := requests()
	if sent < 1 {
		t.Fatalf("%d requests, want the first at least", sent)
	}
	for cancelled() < sent {
		time.Sleep(5 * time.Millisecond) // the server hears of each cancel; the test's own timeout bounds the wait
	}
	if n := requests(); n != sent {
		t.Errorf("%d requests after the call ended, %d when it did: a cancelled call sent more", n, sent)
	}
}

// Named is an embedder of a given ID and dimensions that refuses to embed:
// for what only records or checks which embedder vectors came from (an index
// built from vectors already made, a file that names its embedder).
type Named struct {
	Name string
	Dims int
}

// ID implements search.Embedder.
func (n Named) ID() string { return n.Name }

// Dimensions implements search.Embedder.
func (n Named) Dimensions() int { return n.Dims }

// Embed implements search.Embedder: it fails.
func (n Named) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedtest.Named does not embed")
}
