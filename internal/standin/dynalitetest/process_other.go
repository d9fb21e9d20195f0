//go:build !unix

package dynalitetest

import "errors"

// process is unsupported off unix: without process groups and a POSIX shell
// the watchdog that keeps dynalite from outliving the tests cannot work, so
// tests skip (or fail when DOCLIB_REQUIRE_DYNALITE is set).
type process struct {
	endpoint string
	out      *tailBuffer
	done     chan struct{}
	waitErr  error
}

func launch(string, int, string) (*process, error) {
	return nil, errors.New("dynalitetest supports only unix systems")
}

func (p *process) exited() bool { return true }
func (p *process) kill()        {}
