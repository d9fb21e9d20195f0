package settings

import (
	"flag"
	"fmt"
)

// Search is search on Lambda or in doclib-admin: the embedder of the
// vectors, where they are held (an OpenSearch cluster, or the embedded
// tier's snapshots), and the rules.
type Search struct {
	// Tier is TierOpenSearch (when empty) or TierEmbedded.
	Tier       string
	Embedder   Embedder
	OpenSearch OpenSearch
	Snapshots  Snapshots
	Rules      Rules
}

// SearchFromEnv reads the search settings of a program without flags (a
// Lambda function) from the environment, by the flags' own declarations: the
// same variables, defaults and errors as the programs with flags.
func SearchFromEnv(getenv func(string) string) Search {
	fs := flag.NewFlagSet("env", flag.ContinueOnError)
	var s Search
	s.Tier = envOr(getenv, EnvSearch, TierOpenSearch)
	s.Embedder.Flags(fs, getenv) // declaring a flag stores its default: the environment's value
	s.OpenSearch.Flags(fs, getenv)
	s.Snapshots.Flags(fs, getenv)
	s.Rules.Flags(fs, getenv)
	return s
}

// Validate checks the tier and the settings it needs, without building
// anything.
func (s Search) Validate() error {
	err := s.Embedder.Validate()
	switch {
	case err != nil:
	case s.Tier == "" || s.Tier == TierOpenSearch:
		err = s.OpenSearch.Validate()
	case s.Tier == TierEmbedded:
		err = s.Snapshots.Validate()
	default:
		err = fmt.Errorf("%s is %s or %s, not %q", EnvSearch, TierOpenSearch, TierEmbedded, s.Tier)
	}
	if err != nil {
		return fmt.Errorf("search settings: %w", err)
	}
	return nil
}

// Embedded reports whether s is the embedded tier (else OpenSearch).
func (s Search) Embedded() bool { return s.Tier == TierEmbedded }
