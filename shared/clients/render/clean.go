package render

import (
	"strings"
	"unicode/utf8"
)

// The API's strings are written by people and by recorders, and they reach
// terminals and agents' contexts. A control character in them could move a
// terminal's cursor, retitle its window (ESC ] 0;…), hide text or reorder it
// (bidi overrides), so every string render writes from the data goes through
// Clean or CleanText first.

// Replacement is what Clean and CleanText write for a control character:
// U+FFFD, the character Unicode reserves for "something was here that
// cannot be shown".
const Replacement = '\uFFFD'

// Clean makes s safe to print as one line: line breaks (LF, CR, CRLF, NEL,
// U+2028, U+2029) and tabs become a space; every other C0 or C1 control
// character, DEL, a Unicode bidi control (U+200E, U+200F, U+061C,
// U+202A–U+202E, U+2066–U+2069) or a byte that is not UTF-8 becomes
// U+FFFD. Everything else is kept as is, so Clean changes nothing in
// ordinary text.
func Clean(s string) string {
	if clean(s, false) {
		return s
	}
	return strings.Map(func(r rune) rune { return cleanRune(r, false) }, strings.ReplaceAll(s, "\r\n", "\n"))
}

// CleanText is Clean for text that may span lines (a step, a section's
// paragraphs): newlines and tabs are kept, CRLF and a lone CR become a
// newline (a CR alone would let a line overwrite the one before it), NEL,
// U+2028 and U+2029 become a newline, and the other controls become U+FFFD
// as in Clean.
func CleanText(s string) string {
	if clean(s, true) {
		return s
	}
	return strings.Map(func(r rune) rune { return cleanRune(r, true) }, strings.ReplaceAll(s, "\r\n", "\n"))
}

// clean says whether s needs no change, so that the common case allocates
// nothing.
func clean(s string, multiline bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if cleanRune(r, multiline) != r {
			return false
		}
	}
	return true
}

// cleanRune maps one rune as Clean (multiline false) or CleanText does.
// strings.Map turns bytes that are not UTF-8 into U+FFFD on its own.
func cleanRune(r rune, multiline bool) rune {
	switch {
	case r == '\n', r == '\r', r == 0x85, r == '\u2028', r == '\u2029':
		if multiline {
			return '\n'
		}
		return ' '
	case r == '\t':
		if multiline {
			return '\t'
		}
		return ' '
	case r < 0x20, r >= 0x7f && r < 0xa0,
		r == '\u200e', r == '\u200f', r == '\u061c',
		r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return Replacement
	}
	return r
}
