package standin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin"
	"github.com/doclib/doclib/internal/standin/dynalitetest"
)

// withTemplate is the shared assembly with its template changed by edit.
func withTemplate(t *testing.T, edit func(resources map[string]any)) *standin.Synthesized {
	t.Helper()
	raw, err := os.ReadFile(assembly.Template)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	edit(tmpl["Resources"].(map[string]any))
	out, _ := json.Marshal(tmpl)
	changed := *assembly
	changed.Template = filepath.Join(t.TempDir(), filepath.Base(assembly.Template))
	if err := os.WriteFile(changed.Template, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return &changed
}

// dropFromIndexerPolicy removes the indexer role's statements for which
// drop is true.
func dropFromIndexerPolicy(t *testing.T, drop func(st map[string]any) bool) func(map[string]any) {
	return func(resources map[string]any) {
		t.Helper()
		n := 0
		for id, r := range resources {
			res := r.(map[string]any)
			if res["Type"] != "AWS::IAM::Policy" || !strings.HasPrefix(id, "IndexerRoleDefaultPolicy") {
				continue
			}
			doc := res["Properties"].(map[string]any)["PolicyDocument"].(map[string]any)
			sts := doc["Statement"].([]any)
			kept := slices.DeleteFunc(slices.Clone(sts), func(st any) bool { return drop(st.(map[string]any)) })
			n += len(sts) - len(kept)
			doc["Statement"] = kept
		}
		if n == 0 {
			t.Fatal("no statement of the indexer's policy matched")
		}
	}
}

func hasAction(st map[string]any, action string) bool {
	switch a := st["Action"].(type) {
	case string:
		return a == action
	case []any:
		return slices.Contains(a, any(action))
	}
	return false
}

// TestMappingRightsAreCheckedAtStart: Lambda refuses to create the stream's
// event source mapping when the indexer's role may not read the stream or
// send to the on-failure queue, and the stack fails to create; the
// stand-in fails to start alike.
func TestMappingRightsAreCheckedAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the synthesized stack; not in -short")
	}
	if synthErr != nil {
		t.Fatalf("synthesize: %v", synthErr)
	}
	for _, c := range []struct {
		name string
		drop func(map[string]any) bool
		want string
	}{
		{"no stream read", func(st map[string]any) bool { return st["Sid"] == "ReadStream" }, "Cannot access stream"},
		{"no GetRecords", func(st map[string]any) bool { return hasAction(st, "dynamodb:GetRecords") }, "Cannot access stream"},
		{"no SendMessage", func(st map[string]any) bool { return hasAction(st, "sqs:SendMessage") }, "SendMessage on SQS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := withTemplate(t, dropFromIndexerPolicy(t, c.drop))
			db := dynalitetest.Start(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := standin.Start(ctx, standin.Options{Assembly: a, DynamoDB: db.Endpoint, Run: "esm" + strings.ReplaceAll(c.name, " ", "")})
			if err == nil {
				s.Close()
				t.Fatal("the stand-in started")
			}
			if !strings.Contains(err.Error(), "InvalidParameterValueException") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("start failed with %v; want Lambda's refusal of the mapping (%q)", err, c.want)
			}
		})
	}
}
