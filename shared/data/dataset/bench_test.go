package dataset_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

var (
	benchOnce sync.Once
	benchJSON []byte
)

// BenchmarkLoad100k measures dataset.Load alone (decoding and validating the
// 100,000-document synthetic set from memory); the store's indexes are measured by
// shared/httpapi's benchmark of the same name.
func BenchmarkLoad100k(b *testing.B) {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if err := demo.Encode(&buf, demo.Generate(demo.Options{Documents: 100_000})); err != nil {
			b.Fatal(err)
		}
		benchJSON = buf.Bytes()
	})
	b.SetBytes(int64(len(benchJSON)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := dataset.Load(bytes.NewReader(benchJSON)); err != nil {
			b.Fatal(err)
		}
	}
}
