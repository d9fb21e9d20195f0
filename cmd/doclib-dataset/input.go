package main

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// checkUTF8 refuses text that is not UTF-8, naming the file, the line and the
// column of the first byte that is not: the JSON encoder would write each such
// byte as U+FFFD, and the data-set loader refuses the same bytes in a JSON file.
func checkUTF8(path string, src []byte) error {
	if utf8.Valid(src) {
		return nil
	}
	if bytes.HasPrefix(src, []byte{0xfe, 0xff}) || bytes.HasPrefix(src, []byte{0xff, 0xfe}) {
		return fmt.Errorf("%s:1: the file is not UTF-8 (it looks like UTF-16); save it as UTF-8", path)
	}
	off := 0
	for off < len(src) {
		r, size := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		off += size
	}
	before := src[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Errorf("%s:%d: column %d: the byte 0x%02x is not UTF-8; save the file as UTF-8", path, line, col, src[off])
}

// maxNesting is how many quotes and lists from-markdown reads nested on one
// line. The Markdown parser works out each level's column from the start of the
// line, so the time of a line grows with the square of its levels (200 KB of
// ">" took minutes); no runbook needs more than a few levels.
const maxNesting = 32

// checkNesting refuses a line that opens more than maxNesting quotes or list
// items (">", "-", "+", "*", "1." or "1)" before the text), by file and line,
// before the parser sees it. The count may be high for a line of a code block,
// which is refused all the same: such a line is no runbook's.
func checkNesting(path string, src []byte) error {
	for n, line := 1, src; len(line) > 0; n++ {
		end := bytes.IndexByte(line, '\n')
		if end < 0 {
			end = len(line)
		}
		if depth := nesting(line[:end]); depth > maxNesting {
			return fmt.Errorf("%s:%d: more than %d quotes or lists are nested on this line; from-markdown reads at most %d levels", path, n, maxNesting, maxNesting)
		}
		line = line[min(end+1, len(line)):]
	}
	return nil
}

// nesting counts the container markers at the start of a line, stopping at
// maxNesting+1: the work is bounded by the markers, not the line.
func nesting(line []byte) int {
	depth, i := 0, 0
	blank := func(i int) bool { return i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\r' }
	for depth <= maxNesting {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		switch {
		case i >= len(line):
			return depth
		case line[i] == '>':
			i++
		case (line[i] == '-' || line[i] == '+' || line[i] == '*') && blank(i+1):
			i++
		case line[i] >= '0' && line[i] <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j >= len(line) || (line[j] != '.' && line[j] != ')') || !blank(j+1) {
				return depth
			}
			i = j + 1
		default:
			return depth
		}
		depth++
	}
	return depth
}
