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
		s, err := snapshotsOf(c.env)
		if s.MemoryMB != c.memory || s.CacheMB != c.cache || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: memory %d, cache %d, %v; want %d, %d, %q", c.env, s.MemoryMB, s.CacheMB, err, c.memory, c.cache, c.err)
		}
	}
}

// TestSnapshotsRanges: the size from which segments are opened by range is
// read in KB, 0 opening every one (the follower's negative), unset leaving
// the follower's default (0); the prefetch is on unless turned off. What is
// neither is refused, naming the variable.
func TestSnapshotsRanges(t *testing.T) {
	for _, c := range []struct {
		env        map[string]string
		whole      int64
		noPrefetch bool
		err        string
	}{
		{map[string]string{}, 0, false, ""},
		{map[string]string{EnvSearchRangeFromKB: "0"}, -1, false, ""},
		{map[string]string{EnvSearchRangeFromKB: "512", EnvSearchPrefetch: "off"}, 512 << 10, true, ""},
		{map[string]string{EnvSearchPrefetch: "on"}, 0, false, ""},
		{map[string]string{EnvSearchRangeFromKB: "-1"}, 0, false, EnvSearchRangeFromKB},
		{map[string]string{EnvSearchRangeFromKB: "4MB"}, 0, false, EnvSearchRangeFromKB},
		{map[string]string{EnvSearchPrefetch: "no"}, 0, false, EnvSearchPrefetch},
	} {
		s, err := snapshotsOf(c.env)
		if s.ReadWholeBelow != c.whole || s.NoPrefetch != c.noPrefetch || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: read whole below %d, no prefetch %v, %v; want %d, %v, %q", c.env, s.ReadWholeBelow, s.NoPrefetch, err, c.whole, c.noPrefetch, c.err)
		}
	}
}

// TestSnapshotsRuntime: GOMEMLIMIT and GOGC are kept as the environment
// gives them, so that the search function leaves what they set alone.
func TestSnapshotsRuntime(t *testing.T) {
	s, err := snapshotsOf(map[string]string{EnvGoMemLimit: "1GiB", EnvGOGC: "50"})
	if err != nil || s.GoMemLimit != "1GiB" || s.GOGC != "50" {
		t.Errorf("GOMEMLIMIT %q, GOGC %q, %v", s.GoMemLimit, s.GOGC, err)
	}
	if s, _ := snapshotsOf(map[string]string{}); s.GoMemLimit != "" || s.GOGC != "" {
		t.Errorf("unset: GOMEMLIMIT %q, GOGC %q", s.GoMemLimit, s.GOGC)
	}
}

// snapshotsOf reads the snapshots' settings from env, the bucket set.
func snapshotsOf(env map[string]string) (Snapshots, error) {
	var s Snapshots
	s.Flags(flag.NewFlagSet("t", flag.ContinueOnError), func(k string) string {
		if k == EnvSnapshotBucket {
			return "b"
		}
		return env[k]
	})
	return s, s.Validate()
}
