package doclib

// Plural is one when n is 1, else many: the word a count takes in the
// sentences of messages, logs and rendered text ("1 recording", "3
// recordings").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
