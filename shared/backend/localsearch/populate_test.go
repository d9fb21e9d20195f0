package localsearch

import (
	"bytes"
	"testing"
)

// TestPopulateKeepsContent: mapping pages ahead is advice only. Whatever
// the slice (empty, shorter than a page, starting inside a page, several
// pages long), its bytes and its neighbours' are as they were.
func TestPopulateKeepsContent(t *testing.T) {
	buf := make([]byte, 5<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	want := bytes.Clone(buf)
	for _, c := range []struct{ from, to int }{{0, 0}, {10, 100}, {4095, 4097}, {1, 3 << 20}, {0, len(buf)}, {123, len(buf) - 5}} {
		populate(buf[c.from:c.to])
		if !bytes.Equal(buf, want) {
			t.Fatalf("populate(buf[%d:%d]) changed the memory", c.from, c.to)
		}
	}
	populate(nil)
}
