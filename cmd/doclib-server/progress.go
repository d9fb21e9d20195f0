package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

// Progress lines: one every termEvery on a terminal, where a person waits
// for the server, and one every logEvery otherwise, so that a log file of a
// half-hour build holds about 200 lines, not thousands.
const (
	termEvery = 2 * time.Second
	logEvery  = 10 * time.Second
	// rateWindow is how far back the rate is measured: long enough to
	// smooth a slow server's bursts of answers, short enough to follow a
	// machine that gets busy.
	rateWindow = time.Minute
)

// progress prints what an index build is doing on stderr: the texts
// embedded of the total, the rate, and the time left at that rate. Lines
// come at most every every, and at least that often while the build runs
// (tick), so that a slow embedder's first answer is waited for out loud.
type progress struct {
	w     io.Writer
	what  string // "Indexing for search"
	every time.Duration
	now   func() time.Time

	mu          sync.Mutex
	done, total int
	start, last time.Time
	marks       []mark // (when, done) within rateWindow, oldest first
	printed     bool
	stopped     bool
	stop        chan struct{}
}

type mark struct {
	at   time.Time
	done int
}

// newProgress reports on w, a line per termEvery when tty, else per
// logEvery.
func newProgress(w io.Writer, tty bool, what string, now func() time.Time) *progress {
	every := logEvery
	if tty {
		every = termEvery
	}
	t := now()
	return &progress{w: w, what: what, every: every, now: now, start: t, last: t, stop: make(chan struct{})}
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// run ticks until finish.
func (p *progress) run() {
	t := time.NewTicker(p.every / 4)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.tick()
		case <-p.stop:
			return
		}
	}
}

// report is the build's count: done texts of total (0 while unknown).
func (p *progress) report(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.done, p.total = max(p.done, done), total
	now := p.now()
	p.marks = append(p.marks, mark{now, p.done})
	p.maybePrint(now)
}

// tick prints a line when none came for every.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.maybePrint(p.now())
	}
}

func (p *progress) maybePrint(now time.Time) {
	if now.Sub(p.last) < p.every {
		return
	}
	p.last, p.printed = now, true
	for len(p.marks) > 1 && now.Sub(p.marks[1].at) >= rateWindow {
		p.marks = p.marks[1:]
	}
	if p.done == 0 {
		fmt.Fprintf(p.w, "%s: waiting for the embedder's first answer (%s so far)\n", p.what, now.Sub(p.start).Round(time.Second))
		return
	}
	// The rate over the last rateWindow: from the start while that is
	// younger, else from the last count before the window.
	from := mark{p.start, 0}
	if now.Sub(p.start) > rateWindow && len(p.marks) > 0 {
		from = p.marks[0]
	}
	rate := 0.0
	if s := now.Sub(from.at).Seconds(); s > 0 {
		rate = float64(p.done-from.done) / s
	}
	switch {
	case p.total == 0:
		fmt.Fprintf(p.w, "%s: %d texts embedded, %.1f texts/s\n", p.what, p.done, rate)
	case p.done > p.total:
		// After the index's texts, the build measures the embedder's
		// chance level on a few hundred more (search.Calibrate).
		fmt.Fprintf(p.w, "%s: the %d texts of the index embedded; calibrating the embedder: %d more, %.1f texts/s\n",
			p.what, p.total, p.done-p.total, rate)
	default:
		line := fmt.Sprintf("%s: %d of %d texts embedded (%d%%), %.1f texts/s", p.what, p.done, p.total, 100*p.done/p.total, rate)
		if rate > 0 && p.done < p.total {
			line += fmt.Sprintf(", about %s left", time.Duration(float64(p.total-p.done)/rate*float64(time.Second)).Round(time.Second))
		}
		fmt.Fprintln(p.w, line)
	}
}

// finish stops the lines; when any was printed, a last one says how long
// the build took.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.stop)
	if p.printed && p.done > 0 {
		took := p.now().Sub(p.start)
		fmt.Fprintf(p.w, "%s: %d texts embedded in %s (%.1f texts/s)\n", p.what, p.done, took.Round(time.Second), float64(p.done)/max(took.Seconds(), 0.001))
	}
}

// metered is the embedder to build with, and the build's progress: for a
// model, a Meter that tells p after every request of the embedder (an
// index build reports only after each call of hundreds of texts, minutes
// apart at a few texts a second); an embedder that fits itself to the
// corpus computes in process and keeps the build's own reports.
func metered(e search.Embedder, p *progress) (search.Embedder, func(done, total int)) {
	if _, fits := e.(search.Fitter); fits {
		return e, p.report
	}
	m := embedcall.NewMeter(e, p.report)
	return m, m.Report
}
