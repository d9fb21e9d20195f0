package embedcall

import (
	"context"
	"sync/atomic"

	"github.com/doclib/doclib/shared/search"
)

// Streamer is an embedder that tells each request's vectors as they come,
// before the whole call ends: a vector cache keeps them at once (a build
// cut short keeps what it got), and a progress line moves with every
// request of a slow server rather than with every call. The openai and
// bedrock embedders, and embedcache's Cache over either, are Streamers.
type Streamer interface {
	EmbedEach(ctx context.Context, texts []string, each Each) ([][]float32, error)
}

// EmbedEach is e's EmbedEach when e is a Streamer, or else Embed, with each
// told every vector at the end.
func EmbedEach(ctx context.Context, e search.Embedder, texts []string, each Each) ([][]float32, error) {
	if s, ok := e.(Streamer); ok {
		return s.EmbedEach(ctx, texts, each)
	}
	vs, err := e.Embed(ctx, texts)
	if err == nil && each != nil {
		pos := make([]int, len(texts))
		for i := range pos {
			pos[i] = i
		}
		each(pos, vs)
	}
	return vs, err
}

// Meter is an embedder that counts the texts its inner one hands back, as
// they come, and tells the count with the total its caller learns from a
// build (Report). Wrap the embedder a build embeds with, not one that
// learns from its corpus (search.Fitter), which a Meter would hide from the
// build.
type Meter struct {
	search.Embedder
	tell        func(done, total int)
	done, total atomic.Int64
}

var (
	_ search.Embedder = (*Meter)(nil)
	_ Streamer        = (*Meter)(nil)
)

// NewMeter counts what e embeds and tells tell (which may be nil) after
// every answer: the texts embedded so far and the total, 0 until Report
// says it.
func NewMeter(e search.Embedder, tell func(done, total int)) *Meter {
	return &Meter{Embedder: e, tell: tell}
}

// Embed implements search.Embedder.
func (m *Meter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedEach(ctx, texts, nil)
}

// EmbedEach implements Streamer.
func (m *Meter) EmbedEach(ctx context.Context, texts []string, each Each) ([][]float32, error) {
	return EmbedEach(ctx, m.Embedder, texts, func(pos []int, vs [][]float32) {
		done := m.done.Add(int64(len(pos)))
		if m.tell != nil {
			m.tell(int(done), int(m.total.Load()))
		}
		if each != nil {
			each(pos, vs)
		}
	})
}

// Report is a build's own progress (localsearch.Options.Progress and the
// like): it sets the total, and tells it.
func (m *Meter) Report(done, total int) {
	m.total.Store(int64(total))
	if m.tell != nil {
		m.tell(max(int(m.done.Load()), done), total)
	}
}

// Done is the texts embedded so far.
func (m *Meter) Done() int { return int(m.done.Load()) }
