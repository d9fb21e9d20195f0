package dataset

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Slugify makes a slug the format accepts from a name, for tools that write
// data sets: accents dropped ("café" is "cafe"), apostrophes dropped ("user's"
// is "users"), lower case, one hyphen for each run of anything else, at most max
// characters. It is "" when nothing of the name is left.
func Slugify(name string, max int) string {
	folded, _, _ := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), name)
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(folded) {
		switch {
		case r == '\'' || r == '\u2019':
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max]
	}
	return strings.TrimRight(s, "-")
}
