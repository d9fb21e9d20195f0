package awscheck

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestTopLevelNames(t *testing.T) {
	names := map[string]string{"#n": "name", "#e": "exp", "#m": "meta", "#k": "key"}
	tests := []struct {
		expr string
		want []string
	}{
		{"ADD n :one SET #e = :exp", []string{"n", "exp"}},
		{"attribute_not_exists(n) OR n < :limit", []string{"n", "n"}},
		{"SET #m.#k = if_not_exists(#m.#k, :z) + :one REMOVE tags[2], old", []string{"meta", "meta", "tags", "old"}},
		{"a.b[0].c, #n, size", []string{"a", "name", "size"}},
		{"pk = :pk AND begins_with(sk, :p) AND NOT contains(title, :w)", []string{"pk", "sk", "title"}},
		{"x BETWEEN :a AND :b OR y IN (:c, :d) OR z <> :e", []string{"x", "y", "z"}},
		{"size(body) >= :z", []string{"body"}},
	}
	for _, tc := range tests {
		got, err := topLevelNames(tc.expr, names)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("topLevelNames(%q) = %v, %v; want %v", tc.expr, got, err, tc.want)
		}
	}
	for _, bad := range []string{"#undefined = :v", "a = : b", "a ! b"} {
		if _, err := topLevelNames(bad, names); err == nil {
			t.Errorf("topLevelNames(%q): no error", bad)
		}
	}
}

func TestEqualityValue(t *testing.T) {
	values := map[string]json.RawMessage{":pk": json.RawMessage(`{"S":"RL#1"}`), ":n": json.RawMessage(`{"N":"42"}`),
		":lo": json.RawMessage(`{"S":"a"}`)}
	names := map[string]string{"#p": "pk"}
	tests := []struct {
		expr, attr, want string
		ok               bool
	}{
		{"pk = :pk AND begins_with(sk, :lo)", "pk", "RL#1", true},
		{":pk = #p", "pk", "RL#1", true},
		{"sk > :lo AND id = :n", "id", "42", true},
		{"pk BETWEEN :lo AND :pk", "pk", "", false},
		{"sk = :pk", "pk", "", false},
		{"pk = :missing", "pk", "", false},
	}
	for _, tc := range tests {
		got, ok := equalityValue(tc.expr, tc.attr, names, values)
		if got != tc.want || ok != tc.ok {
			t.Errorf("equalityValue(%q, %q) = %q, %v; want %q, %v", tc.expr, tc.attr, got, ok, tc.want, tc.ok)
		}
	}
}
