package embedcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFanoutOrderSkipAndConcurrency(t *testing.T) {
	texts := []string{"a", "", "b", "c", " ", "d", "e"}
	var inFlight, most atomic.Int64
	f := Fanout{Name: "test", Dims: 2, BatchSize: 2, Concurrency: 2,
		Skip: func(s string) bool { return strings.TrimSpace(s) == "" }}
	got, err := f.Embed(context.Background(), texts, func(_ context.Context, pos []int, batch []string) ([][]float32, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		out := make([][]float32, len(batch))
		for j, s := range batch {
			if texts[pos[j]] != s {
				t.Errorf("position %d holds %q, not %q", pos[j], texts[pos[j]], s)
			}
			out[j] = []float32{float32(pos[j]), float32(len(s))}
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		want := []float32{float32(i), 1}
		if strings.TrimSpace(s) == "" {
			want = []float32{0, 0}
		}
		if !slices.Equal(got[i], want) {
			t.Errorf("vector %d = %v, want %v", i, got[i], want)
		}
	}
	if m := most.Load(); m > 2 {
		t.Errorf("%d calls in flight, want at most 2", m)
	}
}

func TestFanoutFirstErrorAndCancel(t *testing.T) {
	f := Fanout{Name: "test", Dims: 1, BatchSize: 1, Concurrency: 1, Skip: func(s string) bool { return s == "" }}
	boom := errors.New("boom")
	var calls atomic.Int64
	_, err := f.Embed(context.Background(), []string{"a", "b", "c"}, func(ctx context.Context, _ []int, _ []string) ([][]float32, error) {
		if err := ctx.Err(); err != nil {
			return nil, err // cancelled by the first failure
		}
		calls.Add(1)
		return nil, boom
	})
	if !errors.Is(err, boom) || calls.Load() != 1 {
		t.Errorf("err %v after %d calls, want boom after 1", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.Embed(ctx, []string{"a"}, nil)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "test: embed 1 texts: ") {
		t.Errorf("cancelled: %v", err)
	}
	if vs, err := f.Embed(ctx, []string{"", ""}, nil); err != nil || len(vs) != 2 {
		t.Errorf("only skipped texts: %v, %v", vs, err)
	}
}

func TestParseVector(t *testing.T) {
	v, err := ParseVector([]json.Number{"0.5", "-1", "3e-2"}, "it")
	if err != nil || !slices.Equal(v, []float32{0.5, -1, 0.03}) {
		t.Errorf("ParseVector = %v, %v", v, err)
	}
	for _, bad := range []json.Number{"", "NaN", "1e999", "x"} {
		_, err := ParseVector([]json.Number{"1", bad}, "the embedding")
		shown := string(bad)
		if shown == "" {
			shown = "null"
		}
		if want := fmt.Sprintf("the embedding holds %s at 1, not a finite number", shown); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	const base, limit = time.Second, 20 * time.Second
	for attempt, full := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if d := Backoff(attempt, base, limit, func() float64 { return 0 }); d != full/2 {
			t.Errorf("attempt %d, random 0: %s, want %s", attempt, d, full/2)
		}
		if d := Backoff(attempt, base, limit, func() float64 { return 0.999999 }); d < full*99/100 || d > full {
			t.Errorf("attempt %d, random ~1: %s, want about %s", attempt, d, full)
		}
	}
	if d := Backoff(100, base, limit, func() float64 { return 1 }); d != limit {
		t.Errorf("late backoff %s, want the cap %s", d, limit)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("Sleep = %v after %s", err, time.Since(start))
	}
}

func TestClean(t *testing.T) {
	if got := Clean("bad  key sk-123\n\tquoted", "sk-123", "[redacted]"); got != "bad key [redacted] quoted" {
		t.Errorf("Clean = %q", got)
	}
	long := Clean(strings.Repeat("é", MaxMessageRunes+5)+"\xff", "", "")
	if n := len([]rune(long)); n != MaxMessageRunes+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("a long message kept %d runes: %q", n, long)
	}
}
