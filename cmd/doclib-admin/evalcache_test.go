package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/doclib/doclib/internal/suites/embedmodel"
)

// TestEvalKeepsAModelsVectors runs eval twice with the real model: the
// second run takes every text from --embed-cache and asks the model for none
// but the probe that learns its dimensions, and ranks as the first did.
func TestEvalKeepsAModelsVectors(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	embedded := func() int {
		h, err := srv.Health(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return h.Embedded
	}
	dir := t.TempDir()
	eval := func(cache string) (ndcg float64, stderr string, asked int) {
		before := embedded()
		code, out, errs := admin(t, "eval", "--json", "--embedder", "openai", "--embed-url", srv.URL,
			"--embed-model", srv.Model, "--embed-cache", cache, tinyBEIR)
		if code != 0 {
			t.Fatalf("eval: exit %d\n%s", code, errs)
		}
		var got struct {
			Collections []struct{ Doclib struct{ NDCG10 float64 } }
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Collections) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		return got.Collections[0].Doclib.NDCG10, errs, embedded() - before
	}
	line := regexp.MustCompile(`^tiny: (\d+) of (\d+) texts from the vector cache, (\d+) embedded \(.+\.vec\)\n$`)
	counts := func(stderr string) (hits, total, misses int) {
		m := line.FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("stderr %q: no line saying what came from the cache", stderr)
		}
		hits, _ = strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
		misses, _ = strconv.Atoi(m[3])
		return hits, total, misses
	}

	first, errs, asked := eval(dir)
	hits, total, misses := counts(errs)
	// At least the 5 documents and 3 queries (the engine may embed more);
	// openai.New embeds a probe besides.
	if hits != 0 || total < 8 || misses != total || asked != misses+1 {
		t.Errorf("first run: %d of %d from the cache, %d embedded, the model asked for %d texts; want 0 of 8 or more, all embedded, and the probe", hits, total, misses, asked)
	}
	second, errs, asked2 := eval(dir)
	hits, total2, misses := counts(errs)
	// A calibration may ask for the same text twice in one run (runs of
	// words of a short document): the first run embeds it once, the second
	// serves both from the cache, so it may count more texts than the first.
	if hits != total2 || total2 < total || misses != 0 || asked2 != 1 {
		t.Errorf("second run: %d of %d from the cache, %d embedded, the model asked for %d texts; want all of %d or more, 0, only the probe", hits, total2, misses, asked2, total)
	}
	if first != second {
		t.Errorf("nDCG@10 %.4f, then %.4f from the cache", first, second)
	}

	// '' keeps none: every text goes to the model, nothing is said of a cache.
	_, errs, asked3 := eval("")
	if asked3 < asked || errs != "" {
		t.Errorf("--embed-cache '': the model asked for %d texts, stderr %q; want %d or more (repeats are asked again) and nothing", asked3, errs, asked)
	}
}

// TestEvalKeepsNoOfflineVectors: the offline embedder computes in process;
// nothing is written for it.
func TestEvalKeepsNoOfflineVectors(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := admin(t, "eval", "--embed-cache", dir, tinyBEIR)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("%s holds %d files (%v) after an offline eval", dir, len(entries), err)
	}
}
