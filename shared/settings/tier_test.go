package settings

import (
	"flag"
	"strings"
	"testing"
)

// TestSnapshotsMemory: the search function's memory, which Lambda sets,
// and the cache's own bound are read in MB; what is not a positive number
// is refused, naming the variable.
func TestSnapshotsMemory(t *testing.T) {
	for _, c := range []struct {
		env           map[string]string
		memory, cache int
		err           string
	}{
		{map[string]string{}, 0, 0, ""},
		{map[string]string{EnvLambdaMemory: "2048"}, 2048, 0, ""},
		{map[string]string{EnvLambdaMemory: "2048", EnvSearchCacheMB: "300"}, 2048, 300, ""},
		{map[string]string{EnvSearchCacheMB: "0"}, 0, 0, EnvSearchCacheMB},
		{map[string]string{EnvLambdaMemory: "2GB"}, 0, 0, EnvLambdaMemory},
	} {
		var s Snapshots
		s.Flags(flag.NewFlagSet("t", flag.ContinueOnError), func(k string) string {
			if k == EnvSnapshotBucket {
				return "b"
			}
			return c.env[k]
		})
		err := s.Validate()
		if s.MemoryMB != c.memory || s.CacheMB != c.cache || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: memory %d, cache %d, %v; want %d, %d, %q", c.env, s.MemoryMB, s.CacheMB, err, c.memory, c.cache, c.err)
		}
	}
}
