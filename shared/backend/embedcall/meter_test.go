package embedcall

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// model is a search.Embedder over a pacer: a Streamer.
type model struct {
	p    *Pacer
	send Send
}

func (m model) ID() string      { return "model" }
func (m model) Dimensions() int { return 1 }
func (m model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedEach(ctx, texts, nil)
}
func (m model) EmbedEach(ctx context.Context, texts []string, each Each) ([][]float32, error) {
	j := job(m.send)
	j.Each = each
	return m.p.Embed(ctx, texts, j)
}

// TestMeterTellsEveryRequest: a meter over a Streamer tells the count after
// every request, not once per call, with the total its build reports.
func TestMeterTellsEveryRequest(t *testing.T) {
	p, clk, _ := testPacer(Limits{MaxBatch: 10, MaxConcurrency: 1, Timeout: time.Second})
	var mu sync.Mutex
	var told [][2]int
	m := NewMeter(model{p: p, send: func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		clk.advance(time.Second)
		return vectors(in), nil
	}}, func(done, total int) {
		mu.Lock()
		told = append(told, [2]int{done, total})
		mu.Unlock()
	})
	m.Report(0, 38)
	in := texts(38)
	got, err := m.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, in, got)
	// StartBatch (8), then batches of the most (10): 8, 18, 28, 38.
	want := [][2]int{{0, 38}, {8, 38}, {18, 38}, {28, 38}, {38, 38}}
	if !slices.Equal(told, want) {
		t.Errorf("told %v, want %v", told, want)
	}
	if m.Done() != 38 || m.ID() != "model" || m.Dimensions() != 1 {
		t.Errorf("Done %d, ID %q, Dimensions %d", m.Done(), m.ID(), m.Dimensions())
	}
}
