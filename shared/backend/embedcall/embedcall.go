// Package embedcall is what the embedders that call a provider over the
// network (bedrock, openai) share: the pacing of their requests (Pacer:
// batches, requests at once and deadlines adapted to what the provider
// answers, retries), the parsing of the vectors in an answer, the backoff
// between retries, and the cleaning of a provider's message for a log line.
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
)

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
