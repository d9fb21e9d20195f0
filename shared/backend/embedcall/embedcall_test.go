package embedcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

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
