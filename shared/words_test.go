package doclib

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 libraries", 1: "1 library", 2: "2 libraries"} {
		if got := Count(n, "library", "libraries"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
