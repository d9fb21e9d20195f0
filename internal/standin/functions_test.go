package standin

import "testing"

// TestEphemeralStorageFromTheTemplate: a function's EphemeralStorage.Size
// is the bound of its instances' /tmp; without one, lambdaemu's default
// (Lambda's 512 MB) applies.
func TestEphemeralStorageFromTheTemplate(t *testing.T) {
	for _, tc := range []struct {
		props map[string]any
		want  int
	}{
		{map[string]any{"EphemeralStorage": map[string]any{"Size": float64(2048)}}, 2048},
		{map[string]any{"EphemeralStorage": map[string]any{"Size": "1024"}}, 1024},
		{map[string]any{"MemorySize": float64(1024)}, 0},
	} {
		if got := ephemeralMB(tc.props); got != tc.want {
			t.Errorf("ephemeralMB(%v) = %d, want %d", tc.props, got, tc.want)
		}
	}
}
