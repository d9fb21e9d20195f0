package lambdaemu

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// logMu serialises every line written to any pool's Logs: the stand-in
// gives one writer to all its functions, and a line must not be split by
// another's.
var logMu sync.Mutex

// lineWriter prefixes each line a process writes with its function and
// instance, so that interleaved logs still say who wrote what.
type lineWriter struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte // a line not yet ended
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	return len(b), nil
}

// flush writes what is left of a last line without its newline.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit(l.buf)
		l.buf = nil
	}
}

func (l *lineWriter) emit(line []byte) {
	logMu.Lock()
	defer logMu.Unlock()
	_, _ = io.WriteString(l.w, l.prefix+string(line)+"\n")
}

func (p *Pool) prefix(instance int) string {
	return fmt.Sprintf("%s[%d] ", p.fn.Name, instance)
}

// logf writes one of the emulator's own lines for an instance (Lambda's
// START, END, REPORT and timeout lines) among its process's.
func (p *Pool) logf(instance int, format string, args ...any) {
	if p.fn.Logs == nil {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	_, _ = fmt.Fprintf(p.fn.Logs, p.prefix(instance)+format+"\n", args...)
}
