package yamlnode_test

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/doclib/doclib/internal/checks/yamlnode"
)

func TestPath(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a:\n  b: [1]\n  c: x\n"), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	if n := yamlnode.Path(root, "a", "c"); n == nil || n.Value != "x" {
		t.Errorf("a.c = %v, want x", n)
	}
	if n := yamlnode.Path(root, "a", "b"); n == nil || n.Kind != yaml.SequenceNode {
		t.Errorf("a.b = %v, want the sequence", n)
	}
	for _, keys := range [][]string{{"z"}, {"a", "z"}, {"a", "b", "c"}} {
		if n := yamlnode.Path(root, keys...); n != nil {
			t.Errorf("%v = %v, want nil", keys, n)
		}
	}
	if yamlnode.Get(nil, "a") != nil {
		t.Error("Get on nil is not nil")
	}
}
