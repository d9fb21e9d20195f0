package lambdaemu

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// proc is one process of an instance with the Runtime API endpoint it was
// given. Each process gets its own endpoint, so that a request still in
// flight from a killed process cannot take the next process's event.
type proc struct {
	pool  *Pool
	in    *instance
	cold  *ColdStart // guarded by pool.mu
	start time.Time
	cmd   *exec.Cmd
	srv   *http.Server
	logs  *lineWriter // nil when the pool discards logs

	events  chan *event      // to the pending GET next; unbuffered
	ready   chan struct{}    // closed at the first GET next: the init is done
	initErr chan initFailure // what was posted to init/error; buffered
	exited  chan struct{}    // closed once the process has been waited for
	// exitReason is Lambda's wording of how the process ended, set before
	// exited is closed.
	exitReason string

	mu       sync.Mutex
	asked    bool   // it has called GET next
	waiting  bool   // a GET next is pending
	cur      *event // the event it was last given
	answered bool   // cur has its response or error
}

type initFailure struct {
	payload   []byte
	errorType string
}

// spawn starts a process for the instance. A fail answer means the binary
// could not be started, which Lambda reports as Runtime.InvalidEntrypoint.
func (p *Pool) spawn(in *instance, ev *event, inInvoke bool) (*proc, *answer, error) {
	tmp, err := p.tmpDir(in)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("lambdaemu: %s: runtime API endpoint: %w", p.fn.Name, err)
	}
	pr := &proc{
		pool:    p,
		in:      in,
		events:  make(chan *event),
		ready:   make(chan struct{}),
		initErr: make(chan initFailure, 1),
		exited:  make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", pr.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", pr.response)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", pr.invocationError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", pr.initError)
	pr.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = pr.srv.Serve(ln) }()

	cmd := exec.Command(p.fn.Path)
	cmd.Dir = filepath.Dir(p.fn.Path)
	cmd.Env = p.environ(ln.Addr().String(), tmp)
	if p.fn.Logs != nil {
		pr.logs = &lineWriter{w: p.fn.Logs, prefix: p.prefix(in.id)}
		cmd.Stdout, cmd.Stderr = pr.logs, pr.logs
	}
	pr.cmd = cmd

	// The process starts under the pool's lock so that Close, which kills
	// what it finds under the same lock, cannot miss it.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = pr.srv.Close()
		return nil, nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
	pr.cold = &ColdStart{Instance: in.id, InInvoke: inInvoke}
	p.cold = append(p.cold, pr.cold)
	pr.start = time.Now()
	if err := cmd.Start(); err != nil {
		pr.cold.Error = "Runtime.InvalidEntrypoint"
		in.reset = true
		p.mu.Unlock()
		_ = pr.srv.Close()
		a := errorAnswer("Runtime.InvalidEntrypoint", fmt.Sprintf("RequestId: %s Error: %v", ev.id, err))
		return nil, &a, nil
	}
	in.proc = pr
	p.wg.Add(1) // the caller's invoke holds the group above zero, so Close cannot be past its Wait
	p.mu.Unlock()
	if err := limitFileSize(cmd.Process.Pid, p.ephemeralBytes()); err != nil {
		// Then only the check after each invoke bounds /tmp.
		p.logf(in.id, "lambdaemu: cannot bound the process's file size (RLIMIT_FSIZE): %v", err)
	}
	go pr.monitor()
	return pr, nil, nil
}

// monitor waits for the process to end, whatever ends it, and resets its
// instance if it was still the instance's process.
func (pr *proc) monitor() {
	p := pr.pool
	defer p.wg.Done()
	_ = pr.cmd.Wait()
	st := pr.cmd.ProcessState
	if st.Exited() && st.ExitCode() == 0 {
		pr.exitReason = "Runtime exited without providing a reason"
	} else {
		pr.exitReason = "Runtime exited with error: " + st.String()
	}
	// Closing the server cancels this process's pending requests.
	_ = pr.srv.Close()
	if pr.logs != nil {
		pr.logs.flush()
	}
	close(pr.exited)
	p.mu.Lock()
	if pr.in.proc == pr {
		pr.in.proc = nil
		pr.in.reset = true
	}
	p.mu.Unlock()
}

// kill ends the process at once, as Lambda does on a timeout or reset.
func (pr *proc) kill() {
	_ = pr.cmd.Process.Kill()
}

// initStatus is how an init ended.
type initStatus struct {
	kind     int
	payload  []byte // initPosted: the error posted to init/error
	postedAs string // initPosted: its type
}

const (
	initReady = iota
	initPosted
	initExited
	initTimedOut
	initClosed
)

func (s initStatus) errorType() string {
	switch s.kind {
	case initPosted:
		return s.postedAs
	case initExited:
		return "Runtime.ExitError"
	case initTimedOut:
		return "Sandbox.Timedout"
	}
	return ""
}

// waitInit waits until the process asks for its first event, reports an
// init error, exits, or until the deadline.
func (pr *proc) waitInit(until time.Time, closing <-chan struct{}) initStatus {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case <-pr.ready:
		return initStatus{kind: initReady}
	case f := <-pr.initErr:
		return initStatus{kind: initPosted, payload: f.payload, postedAs: f.errorType}
	case <-pr.exited:
		// A runtime usually exits right after posting init/error: what it
		// said is the better answer.
		select {
		case f := <-pr.initErr:
			return initStatus{kind: initPosted, payload: f.payload, postedAs: f.errorType}
		default:
		}
		return initStatus{kind: initExited}
	case <-timer.C:
		return initStatus{kind: initTimedOut}
	case <-closing:
		return initStatus{kind: initClosed}
	}
}

// next is GET /runtime/invocation/next: it blocks until the pool hands the
// process an event. The first call ends the process's init.
func (pr *proc) next(w http.ResponseWriter, r *http.Request) {
	pr.mu.Lock()
	switch {
	case pr.cur != nil && !pr.answered:
		pr.mu.Unlock()
		renderError(w, http.StatusForbidden, "InvalidStateTransition",
			"State transition from Invoking to Ready failed for runtime. Error: the invocation has no response or error yet")
		return
	case pr.waiting:
		pr.mu.Unlock()
		renderError(w, http.StatusForbidden, "InvalidStateTransition",
			"State transition from Ready to Ready failed for runtime. Error: a next request is already pending")
		return
	}
	first := !pr.asked
	pr.asked = true
	pr.waiting = true
	pr.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		pr.waiting = false
		pr.mu.Unlock()
	}()
	if first {
		pr.pool.mu.Lock()
		pr.cold.Init = time.Since(pr.start)
		pr.pool.mu.Unlock()
		close(pr.ready)
	}
	select {
	case ev := <-pr.events:
		pr.mu.Lock()
		pr.cur, pr.answered = ev, false
		pr.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", ev.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(ev.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", pr.pool.arn)
		h.Set("Lambda-Runtime-Trace-Id", ev.trace)
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(ev.payload)
	case <-r.Context().Done():
	case <-pr.exited:
	}
}

// claim takes the event a response or error is posted for; false if the ID
// is not the event in flight or it was answered already.
func (pr *proc) claim(id string) (*event, bool) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.cur == nil || pr.cur.id != id || pr.answered {
		return nil, false
	}
	pr.answered = true
	p := pr.pool
	p.mu.Lock()
	if pr.cold.FirstAnswer == 0 {
		pr.cold.FirstAnswer = time.Since(pr.start)
	}
	p.mu.Unlock()
	return pr.cur, true
}

// response is POST /runtime/invocation/{id}/response.
func (pr *proc) response(w http.ResponseWriter, r *http.Request) {
	pr.mu.Lock()
	ev := pr.cur
	pr.mu.Unlock()
	if ev != nil && ev.id == r.PathValue("id") && ev.stream != nil {
		pr.streamResponse(w, r, ev)
		return
	}
	body, size, err := readLimited(r.Body, MaxResponseSize)
	if err != nil {
		return // the runtime went away mid-request; its exit is handled by monitor
	}
	// aws-lambda-go reports a handler response it could not read in full in
	// trailers, after the body: it is the invocation's error.
	if failed, ok := trailerError(r); ok {
		pr.deliver(w, r, failed)
		return
	}
	if size > MaxResponseSize {
		ev, ok := pr.claim(r.PathValue("id"))
		if !ok {
			renderError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
			return
		}
		ev.done <- errorAnswer("Function.ResponseSizeTooLarge",
			fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", size, MaxResponseSize))
		renderError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			fmt.Sprintf("Exceeded maximum allowed payload size (%d bytes).", MaxResponseSize))
		return
	}
	pr.deliver(w, r, answer{payload: body})
}

// trailerError is the error a runtime reports in a response's trailers,
// after its body: aws-lambda-go does so when it cannot read a handler's
// response in full (a streamed one failing midway, too).
func trailerError(r *http.Request) (answer, bool) {
	typ := r.Trailer.Get("Lambda-Runtime-Function-Error-Type")
	if typ == "" {
		return answer{}, false
	}
	payload, err := base64.StdEncoding.DecodeString(r.Trailer.Get("Lambda-Runtime-Function-Error-Body"))
	if err != nil || !json.Valid(payload) {
		payload = errorAnswer(typ, "").payload
	}
	return answer{payload: payload, failed: true}, true
}

// invocationError is POST /runtime/invocation/{id}/error. Lambda returns
// the posted body as the invoke's payload.
func (pr *proc) invocationError(w http.ResponseWriter, r *http.Request) {
	body, _, err := readLimited(r.Body, MaxResponseSize)
	if err != nil {
		return
	}
	if body == nil || !json.Valid(body) {
		body = errorAnswer(r.Header.Get("Lambda-Runtime-Function-Error-Type"), string(body)).payload
	}
	pr.deliver(w, r, answer{payload: body, failed: true})
}

func (pr *proc) deliver(w http.ResponseWriter, r *http.Request, a answer) {
	ev, ok := pr.claim(r.PathValue("id"))
	if !ok {
		renderError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	ev.done <- a
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

// initError is POST /runtime/init/error, allowed only before the first GET
// next.
func (pr *proc) initError(w http.ResponseWriter, r *http.Request) {
	pr.mu.Lock()
	asked := pr.asked
	pr.mu.Unlock()
	if asked {
		renderError(w, http.StatusForbidden, "InvalidStateTransition",
			"State transition from Ready to InitError failed for runtime. Error: the init is over")
		return
	}
	body, _, err := readLimited(r.Body, MaxResponseSize)
	if err != nil {
		return
	}
	typ := r.Header.Get("Lambda-Runtime-Function-Error-Type")
	if typ == "" {
		typ = "Runtime.Unknown"
	}
	if body == nil || !json.Valid(body) {
		body = errorAnswer(typ, string(body)).payload
	}
	select {
	case pr.initErr <- initFailure{payload: body, errorType: typ}:
	default: // only the first report counts
	}
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

// readLimited reads a body of at most limit bytes; a longer one is read to
// its end (so that trailers arrive and the size is known) and not kept.
func readLimited(r io.Reader, limit int) ([]byte, int, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) <= limit {
		return b, len(b), nil
	}
	more, err := io.Copy(io.Discard, r)
	if err != nil {
		return nil, 0, err
	}
	return nil, len(b) + int(more), nil
}

func renderError(w http.ResponseWriter, status int, errorType, message string) {
	renderJSON(w, status, errorObject{ErrorMessage: message, ErrorType: errorType})
}

func renderJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
