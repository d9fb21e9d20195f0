// Package yamlnode reads yaml.v3 node trees, for the tools and tests that edit
// YAML documents in place (the pruned OpenSearch description, the examples of
// docs/openapi.yaml) and so keep key order, comments and positions.
package yamlnode

import "go.yaml.in/yaml/v3"

// Get returns the value of key in the mapping m, or nil when m is not a
// mapping or has no such key.
func Get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Path follows keys through nested mappings, nil when one is missing.
func Path(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = Get(m, k)
	}
	return m
}
