package settings

import (
	"fmt"
	"strconv"
	"time"
)

// Search tiers of a stack, the values of EnvSearch in the Lambda functions
// (infra/README.md, "Search tiers").
const (
	// TierOpenSearch searches an OpenSearch Service domain.
	TierOpenSearch = "opensearch"
	// TierEmbedded runs the embedded engine in the search function, over the
	// snapshot the indexer publishes in the stack's bucket.
	TierEmbedded = "embedded"
)

// DefaultSnapshotPoll is how often, at most, a search function looks for a
// newer manifest when EnvSnapshotPoll is not set.
const DefaultSnapshotPoll = 5 * time.Second

// Snapshots is where the embedded tier's snapshots live.
type Snapshots struct {
	// Bucket is the S3 bucket (versioning on) of the snapshots.
	Bucket string
	// Poll is how often, at most, a search looks for a newer snapshot.
	Poll time.Duration
	// MemoryMB is the search function's memory (EnvLambdaMemory; 0
	// outside Lambda), from which the follower sizes what it keeps of the
	// segments' cold parts; CacheMB, when set (EnvSearchCacheMB), is that
	// bound itself.
	MemoryMB, CacheMB int
	// ReadWholeBelow is the size in bytes under which the follower reads a
	// segment whole, and from which it opens one by range
	// (EnvSearchRangeFromKB; snapshot.Follower.ReadWholeBelow): 0 is the
	// follower's default, negative opens every segment by range.
	ReadWholeBelow int64
	// NoPrefetch turns off the background read of the cold parts
	// (EnvSearchPrefetch=off): they are read only as queries need them.
	NoPrefetch bool
	// GoMemLimit is GOMEMLIMIT as the environment gives it: when set, the
	// Go runtime has read it, and the search function sets no limit of
	// its own (wiring.SnapshotFollower).
	GoMemLimit string
	// GOGC is GOGC as the environment gives it: when set, the Go runtime
	// has read it, and the search function leaves the collector's
	// percentage as it is (snapshot.Follower.GCHeadroom).
	GOGC string

	envErr error
}

// Flags declares the snapshots' settings, with defaults from the
// environment.
func (s *Snapshots) Flags(fs FlagSet, getenv func(string) string) {
	fs.StringVar(&s.Bucket, "snapshot-bucket", getenv(EnvSnapshotBucket),
		"S3 `BUCKET` of the embedded tier's search snapshots (the stack's SnapshotBucket output) (env "+EnvSnapshotBucket+")")
	s.Poll = DefaultSnapshotPoll
	s.GoMemLimit = getenv(EnvGoMemLimit)
	s.GOGC = getenv(EnvGOGC)
	if v := getenv(EnvSnapshotPoll); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			s.envErr = fmt.Errorf("%s=%q is not a positive duration such as 5s", EnvSnapshotPoll, v)
		} else {
			s.Poll = d
		}
	}
	for _, v := range []struct {
		name string
		to   *int
	}{{EnvLambdaMemory, &s.MemoryMB}, {EnvSearchCacheMB, &s.CacheMB}} {
		if raw := getenv(v.name); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n <= 0 {
				s.envErr = fmt.Errorf("%s=%q is not a positive number of MB", v.name, raw)
				continue
			}
			*v.to = n
		}
	}
	if raw := getenv(EnvSearchRangeFromKB); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		switch {
		case err != nil || n < 0 || n > 1<<40:
			s.envErr = fmt.Errorf("%s=%q is not a number of KB (0: every segment by range)", EnvSearchRangeFromKB, raw)
		case n == 0:
			s.ReadWholeBelow = -1
		default:
			s.ReadWholeBelow = n << 10
		}
	}
	switch v := getenv(EnvSearchPrefetch); v {
	case "", "on":
	case "off":
		s.NoPrefetch = true
	default:
		s.envErr = fmt.Errorf("%s=%q is neither on nor off", EnvSearchPrefetch, v)
	}
}

// Validate checks the settings without building anything.
func (s Snapshots) Validate() error {
	switch {
	case s.envErr != nil:
		return s.envErr
	case s.Bucket == "":
		return fmt.Errorf("the embedded search tier needs its snapshot bucket: set %s (the stack sets it) or give --snapshot-bucket", EnvSnapshotBucket)
	}
	return nil
}
