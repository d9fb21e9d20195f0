package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeClock is a progress's time, moved by the test.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// build feeds p a build of total texts, one every step, and a tick every
// second, as the embedder's answers and the ticker would.
func build(p *progress, clk *fakeClock, total int, step time.Duration) {
	next := clk.t.Add(time.Second)
	for done := 1; done <= total; done++ {
		clk.t = clk.t.Add(step)
		p.report(done, total)
		for !clk.t.Before(next) {
			p.tick()
			next = next.Add(time.Second)
		}
	}
}

// TestProgressInALogFile: with stderr not a terminal, a build of 300 texts
// at 3 a second (100 s) prints a line about every 10 s, not one per
// answer, each with the texts done of the total, the rate and the time
// left; then one line with the whole build's time and rate.
func TestProgressInALogFile(t *testing.T) {
	var out strings.Builder
	clk := &fakeClock{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	p := newProgress(&out, false, "Indexing for search", clk.now)
	build(p, clk, 300, time.Second/3)
	p.finish()
	p.report(400, 400) // after the build: nothing
	p.tick()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if n := len(lines); n < 9 || n > 11 {
		t.Fatalf("%d lines for a 100 s build, want about 10 (one per 10 s and the last):\n%s", n, out.String())
	}
	for _, l := range lines[:len(lines)-1] {
		// At 3 texts a second, (300 - done) / 3 seconds are left.
		var done, pct int
		var left string
		if _, err := fmt.Sscanf(l, "Indexing for search: %d of 300 texts embedded (%d%%), 3.0 texts/s, about %s left", &done, &pct, &left); err != nil {
			t.Errorf("line %q does not say the count of the total, the rate (3.0 texts/s) and the time left: %v", l, err)
			continue
		}
		d, err := time.ParseDuration(left)
		if want := time.Duration(300-done) * time.Second / 3; err != nil || d < want-time.Second || d > want+time.Second {
			t.Errorf("line %q: %s left, want about %s", l, left, want.Round(time.Second))
		}
	}
	if last := lines[len(lines)-1]; last != "Indexing for search: 300 texts embedded in 1m40s (3.0 texts/s)" {
		t.Errorf("last line %q", last)
	}
}

// TestProgressOnATerminal: on a terminal a line comes every 2 s, and while
// the embedder has not answered yet the ticks say so.
func TestProgressOnATerminal(t *testing.T) {
	var out strings.Builder
	clk := &fakeClock{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	p := newProgress(&out, true, "Indexing for search", clk.now)
	for range 5 { // 5 s before the first answer
		clk.t = clk.t.Add(time.Second)
		p.tick()
	}
	if got := out.String(); strings.Count(got, "waiting for the embedder's first answer") != 2 {
		t.Errorf("before the first answer:\n%s\nwant two lines waiting for it (at 2 s and 4 s)", got)
	}
	out.Reset()
	build(p, clk, 60, time.Second/3) // 20 s
	if n := strings.Count(out.String(), "\n"); n < 9 || n > 11 {
		t.Errorf("%d lines in 20 s on a terminal, want about 10:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), " texts/s, about ") {
		t.Errorf("no rate or time left:\n%s", out.String())
	}
}

// TestProgressOutsideTheTotal: before the build says its total, a line
// says the texts embedded and the rate; texts embedded past the total are
// the calibration's, and said so.
func TestProgressOutsideTheTotal(t *testing.T) {
	for _, c := range []struct {
		done, total int
		want        string
	}{
		{30, 0, "Indexing for search: 30 texts embedded, 3.0 texts/s\n"},
		{30, 20, "Indexing for search: the 20 texts of the index embedded; calibrating the embedder: 10 more, 3.0 texts/s\n"},
	} {
		var out strings.Builder
		clk := &fakeClock{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
		p := newProgress(&out, false, "Indexing for search", clk.now)
		clk.t = clk.t.Add(10 * time.Second)
		p.report(c.done, c.total)
		if got := out.String(); got != c.want {
			t.Errorf("%d of %d: got %q, want %q", c.done, c.total, got, c.want)
		}
	}
}
