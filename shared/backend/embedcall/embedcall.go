// Package embedcall is what the embedders that call a provider over the
// network (bedrock, openai) share: the fan-out of texts over concurrent
// calls, the parsing of the vectors in an answer, the backoff between
// retries, and the cleaning of a provider's message for a log line.
//
// It sits under backend/, beside the embedders that use it, rather than in
// search next to the Embedder interface: it is about talking to a provider
// (batches, retries, answers), not about the rules of search, and the offline
// embedders need none of it.
package embedcall

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
)

// Fanout says how Embed splits texts into calls.
type Fanout struct {
	// Name starts the messages of errors Embed makes itself ("bedrock").
	Name string
	// Dims is the length of the zero vector a skipped text gets.
	Dims int
	// BatchSize is the number of texts per call, at least 1.
	BatchSize int
	// Concurrency is the number of calls in flight, at least 1.
	Concurrency int
	// Skip tells the texts not to send, which get a zero vector: providers
	// reject empty input, and a blank text carries no meaning to match.
	Skip func(text string) bool
}

// Embed returns one vector per text, in order: a zero vector for the texts
// f.Skip names, and embed's answer for the others, sent f.BatchSize at a time
// and f.Concurrency calls at once. embed gets the batch's texts and their
// positions in texts, and returns their vectors in the same order; its error is
// returned as it is, so it should say which texts failed. The first failure
// cancels the other calls.
func (f Fanout) Embed(ctx context.Context, texts []string,
	embed func(ctx context.Context, pos []int, batch []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var pending []int // positions of the texts to send
	for i, t := range texts {
		if f.Skip(t) {
			out[i] = make([]float32, f.Dims)
		} else {
			pending = append(pending, i)
		}
	}
	if len(pending) == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: embed %d texts: %w", f.Name, len(pending), err)
	}

	size := max(f.BatchSize, 1)
	batches := (len(pending) + size - 1) / size
	run := func(ctx context.Context, b int) error {
		pos := pending[b*size : min((b+1)*size, len(pending))]
		in := make([]string, len(pos))
		for j, p := range pos {
			in[j] = texts[p]
		}
		vs, err := embed(ctx, pos, in)
		if err != nil {
			return err
		}
		for j, p := range pos {
			out[p] = vs[j]
		}
		return nil
	}
	if batches == 1 {
		if err := run(ctx, 0); err != nil {
			return nil, err
		}
		return out, nil
	}

	// At most f.Concurrency calls at once; the first failure cancels the
	// others, whose errors are mostly that cancel's echo (errgroup keeps
	// the first).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(f.Concurrency, 1))
	for k := range batches {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return run(gctx, k) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Scheduling stops quietly when ctx ends between calls.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: embed %d texts: %w", f.Name, len(pending), err)
	}
	return out, nil
}

// ParseVector turns the numbers of one embedding into a vector. They come as
// json.Number so that a null, which would decode silently as 0 into a float,
// is caught with anything else that is not a finite number. what names the
// embedding in the error ("the embedding for index 3").
func ParseVector(nums []json.Number, what string) ([]float32, error) {
	v := make([]float32, len(nums))
	for j, num := range nums {
		f, err := strconv.ParseFloat(string(num), 32)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			shown := string(num)
			if shown == "" {
				shown = "null"
			}
			return nil, fmt.Errorf("%s holds %s at %d, not a finite number", what, shown, j)
		}
		v[j] = float32(f)
	}
	return v, nil
}

// Backoff is the wait before retry attempt+1: base doubled per attempt up to
// limit, with the upper half jittered by random (a number in [0, 1)) so that
// callers throttled together do not return together.
func Backoff(attempt int, base, limit time.Duration, random func() float64) time.Duration {
	d := limit
	if attempt < 16 {
		d = min(base<<attempt, limit)
	}
	return d/2 + time.Duration(random()*float64(d/2))
}

// Sleep waits for d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MaxMessageRunes is where Clean cuts a provider's message, to keep it
// readable in a log line.
const MaxMessageRunes = 200

// Clean makes a provider's message fit one log line: valid UTF-8, one space
// between words, at most MaxMessageRunes. Every occurrence of hide (the text
// sent, an API key), unless it is empty, becomes mask first, since providers
// quote their input back.
func Clean(msg, hide, mask string) string {
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "?")
	}
	if hide != "" {
		msg = strings.ReplaceAll(msg, hide, mask)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > MaxMessageRunes {
		r := []rune(msg)
		msg = string(r[:MaxMessageRunes]) + "…"
	}
	return msg
}
