package demo

import (
	"strings"
	"testing"
)

// The corpus is decoded strictly and checked against the generator's limits, so
// a slip in corpus.json is an error at start-up, not an odd data set.
func TestParseCorpusRefusesMistakes(t *testing.T) {
	valid := string(corpusJSON)
	if _, err := parseCorpus([]byte(valid)); err != nil {
		t.Fatalf("corpus.json: %v", err)
	}
	for name, c := range map[string]struct{ old, new, want string }{
		"misspelt field": {`"siteSentence"`, `"siteSentance"`, "unknown field"},
		"missing next":   {`"next": [`, `"next": [ "no-such-procedure",`, "does not exist"},
		"duplicate label": {`"variants": [
            {
              "label": "contractor account"`, `"variants": [
            {
              "label": "contractor account"
            },
            {
              "label": "contractor account"`, "duplicate label"},
	} {
		t.Run(name, func(t *testing.T) {
			broken := strings.Replace(valid, c.old, c.new, 1)
			if broken == valid {
				t.Fatalf("%q is not in corpus.json", c.old)
			}
			_, err := parseCorpus([]byte(broken))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
