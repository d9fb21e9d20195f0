package doclib

import "strconv"

// Plural is one when n is 1, else many: the word a count takes in the
// sentences of messages, logs and rendered text ("1 recording", "3
// recordings").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n followed by the word it takes: "1 library", "3 libraries".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}
