//go:build !linux

package localsearch

// populate does nothing where pages are not mapped ahead by advice.
func populate([]byte) {}
