package stack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/indexer"
)

// nopUsage turns the indexer's usage sync on, as DOCLIB_USAGE_PLANS does.
type nopUsage struct{}

func (nopUsage) Put(context.Context, doclib.KeyHash, string) error { return nil }
func (nopUsage) Delete(context.Context, doclib.KeyHash) error      { return nil }

// matches applies a Lambda event filter pattern, in the subset the stack
// uses (nested objects; arrays of exact strings and {"prefix": …}), to an
// event as JSON.
func matches(pattern, event any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		e, ok := event.(map[string]any)
		if !ok {
			return false
		}
		for k, sub := range p {
			v, ok := e[k]
			if !ok || !matches(sub, v) {
				return false
			}
		}
		return true
	case []any:
		s, ok := event.(string)
		if !ok {
			return false
		}
		for _, alt := range p {
			switch a := alt.(type) {
			case string:
				if s == a {
					return true
				}
			case map[string]any:
				if prefix, ok := a["prefix"].(string); ok && len(a) == 1 && strings.HasPrefix(s, prefix) {
					return true
				}
			}
		}
		return false
	}
	return false
}

// TestStreamFilters runs a record of every kind the table holds through the
// synthesized event source mapping's filters and through the indexer's own
// Affected: whatever the indexer acts on must pass the filters, and the
// writes that made the finding (rate-limit windows and their TTL deletes,
// credit spending) must not invoke it.
func TestStreamFilters(t *testing.T) {
	s := synth(t, defaultContext)
	var filters []any
	for _, f := range list(s.one(t, "AWS::Lambda::EventSourceMapping").Props["FilterCriteria"].(map[string]any)["Filters"]) {
		var p any
		if err := json.Unmarshal([]byte(f.(map[string]any)["Pattern"].(string)), &p); err != nil {
			t.Fatalf("filter pattern %v: %v", f, err)
		}
		filters = append(filters, p)
	}
	x := &indexer.Indexer{Usage: nopUsage{}}
	hash := doclib.HashKey("dlk_live_secret").String()
	items := [][2]string{ // pk, sk
		{"DOC#doc_1", "A"}, {"DOC#doc_1", "R#rec_1"}, {"DOC#doc_1", "O#doc_2"}, {"DOC#doc_1", "I#doc_2"},
		{"WS#ws_1", "WS"}, {"WS#ws_1", "CREDIT"}, {"WS#ws_1", "DEV#dev_1"}, {"WS#ws_1", "KEY#key_1"},
		{"WS#ws_1", "LIB#lib_1"}, {"WS#ws_1", "SLUG#docs"},
		{"KEY#" + hash, "KEY"},
		{"LIB#lib_1", "D#doc_1"}, {"LIB#lib_1", "G#0"},
		{"RL#key:ws_a/abc#1700000000", "RL"}, {"RL#ip:192.0.2.1#1700000000", "RL"},
	}
	dropped := map[string]bool{"RL#": true, "WS#/CREDIT": true}
	img := func(plan string) map[string]events.DynamoDBAttributeValue {
		return map[string]events.DynamoDBAttributeValue{"plan": events.NewStringAttribute(plan), "n": events.NewNumberAttribute(plan)}
	}
	for _, it := range items {
		for _, name := range []string{"INSERT", "MODIFY", "REMOVE"} {
			rec := events.DynamoDBEventRecord{EventName: name, EventSource: "aws:dynamodb", Change: events.DynamoDBStreamRecord{
				Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(it[0]), "sk": events.NewStringAttribute(it[1])},
			}}
			if name != "INSERT" {
				rec.Change.OldImage = img("team")
			}
			if name != "REMOVE" {
				rec.Change.NewImage = img("enterprise")
			}
			raw, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			var event any
			if err := json.Unmarshal(raw, &event); err != nil {
				t.Fatal(err)
			}
			pass := false
			for _, f := range filters {
				pass = pass || matches(f, event)
			}
			c, err := x.Affected(rec)
			if err != nil {
				t.Errorf("%s %s/%s: the indexer refuses the record: %v", name, it[0], it[1], err)
				continue
			}
			if !c.Empty() && !pass {
				t.Errorf("%s %s/%s: the indexer acts on it (%+v) but the stream filters drop it", name, it[0], it[1], c)
			}
			kind, _, _ := strings.Cut(it[0], "#")
			if (dropped[kind+"#"] || dropped[kind+"#/"+it[1]]) && pass {
				t.Errorf("%s %s/%s invokes the indexer, which ignores it", name, it[0], it[1])
			}
		}
	}
}

// TestNoReservationUnlessAsked: no function reserves concurrency unless a
// context value asks, in either search tier (a reservation takes from the
// whole account's pool, and an account whose quota is 10, as new accounts'
// often is, refuses any: the stack would fail to create); the context's
// number on its function alone when given.
func TestNoReservationUnlessAsked(t *testing.T) {
	indexerOne := map[string]any{KeySearch: SearchEmbedded, KeyIndexerConcurrency: "1"}
	for _, variant := range []map[string]any{defaultContext, embeddedContext, customContext, indexerOne} {
		s := synth(t, variant)
		want := map[string]int{
			s.functionID(t, lambdaapp.FunctionAuthorizer): s.cfg.AuthorizerReservedConcurrency,
			s.functionID(t, lambdaapp.FunctionIndexer):    s.cfg.IndexerReservedConcurrency,
		}
		for _, f := range s.resources("AWS::Lambda::Function") {
			got, set := f.Props["ReservedConcurrentExecutions"]
			n := want[f.ID]
			if set != (n > 0) || (set && got != float64(n)) {
				t.Errorf("%v: %s reserves %v (set %v), want %d", variant, f.ID, got, set, n)
			}
		}
	}
}
