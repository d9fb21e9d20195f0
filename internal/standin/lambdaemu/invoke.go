package lambdaemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// event is one invocation as the Runtime API hands it to a process.
type event struct {
	// stream, when set, is where a streamed invocation's response goes as
	// the runtime posts it (InvokeStream).
	stream   *sink
	id       string // Lambda-Runtime-Aws-Request-Id
	trace    string // Lambda-Runtime-Trace-Id
	payload  []byte
	deadline time.Time
	done     chan answer // the runtime's response or error; buffered, written once
}

// answer is what became of an event.
type answer struct {
	payload []byte
	failed  bool // a function error: X-Amz-Function-Error is Unhandled
}

// errorObject is the error payload Lambda itself writes when the function
// could not answer (exit, timeout, oversized response).
type errorObject struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType,omitempty"`
}

func errorAnswer(errorType, message string) answer {
	b, _ := json.Marshal(errorObject{ErrorMessage: message, ErrorType: errorType})
	return answer{payload: b, failed: true}
}

// exitAnswer is Lambda's answer when the runtime process ended without
// answering the event.
func exitAnswer(requestID, exit string) answer {
	return errorAnswer("Runtime.ExitError", fmt.Sprintf("RequestId: %s Error: %s", requestID, exit))
}

// timeoutAnswer is Lambda's answer when an invoke overran the function's
// timeout: an error object without a type, whose message is the time, the
// request ID and how long the invoke ran.
func (p *Pool) timeoutAnswer(ev *event) answer {
	now := time.Now()
	ran := now.Sub(ev.deadline.Add(-p.fn.Timeout)).Seconds()
	msg := fmt.Sprintf("%s %s Task timed out after %.2f seconds", now.UTC().Format("2006-01-02T15:04:05.000Z"), ev.id, ran)
	return errorAnswer("", msg)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newTraceID is an X-Ray trace header as Lambda passes it when the caller
// sent none: a new root, the time in its first part, not sampled.
func newTraceID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}

// execute runs one event on an instance the caller holds: it starts the
// instance's process first if there is none, hands the event over and waits
// for the answer, a crash or the deadline.
func (p *Pool) execute(in *instance, payload []byte, sk *sink) (Result, error) {
	ev := &event{stream: sk, id: newRequestID(), trace: newTraceID(), payload: payload, done: make(chan answer, 1)}
	res := Result{Instance: in.id}
	var tmpBefore int64
	if in.tmp != "" {
		tmpBefore = tmpUsage(in.tmp)
	}
	start := time.Now()
	p.logf(in.id, "START RequestId: %s Version: $LATEST", ev.id)
	var initDuration time.Duration
	for attempt := 0; ; attempt++ {
		p.mu.Lock()
		pr := in.proc
		p.mu.Unlock()
		if pr == nil {
			res.Cold = true
			t0 := time.Now()
			var fail *answer
			var err error
			pr, fail, err = p.initialize(in, ev)
			initDuration = time.Since(t0)
			if err != nil {
				return res, err
			}
			if fail != nil {
				return p.finish(res, ev, start, initDuration, *fail, nil), nil
			}
		} else {
			ev.deadline = start.Add(p.fn.Timeout)
		}
		a, gone, err := p.run(in, pr, ev)
		if err != nil {
			return res, err
		}
		if gone && attempt == 0 {
			// The process died while idle, before it took this event
			// (aws-lambda-go exits after reporting a panic): the instance
			// was reset, and this invoke initialises it again.
			continue
		}
		if gone {
			a = exitAnswer(ev.id, pr.exitReason)
		}
		if over := p.tmpOverrun(in, ev, tmpBefore); over != nil && !a.failed {
			a = *over
		}
		return p.finish(res, ev, start, initDuration, a, pr), nil
	}
}

// finish logs the invoke's end as Lambda's platform lines do and returns
// its result; pr is the process that ran it (nil when none did).
func (p *Pool) finish(res Result, ev *event, start time.Time, initDuration time.Duration, a answer, pr *proc) Result {
	res.Payload = a.payload
	if a.failed {
		res.FunctionError = "Unhandled"
	}
	took := time.Since(start) - initDuration
	res.Duration = took
	line := fmt.Sprintf("REPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %d ms\tMemory Size: %d MB",
		ev.id, float64(took)/float64(time.Millisecond), took.Milliseconds()+1, p.fn.MemoryMB)
	if pr != nil {
		if peak, ok := pr.peakMemory(); ok {
			res.MaxMemoryMB = int((peak + 1<<20 - 1) >> 20)
			line += fmt.Sprintf("\tMax Memory Used: %d MB", res.MaxMemoryMB)
		}
	}
	if res.Cold {
		line += fmt.Sprintf("\tInit Duration: %.2f ms", float64(initDuration)/float64(time.Millisecond))
	}
	p.logf(res.Instance, "END RequestId: %s", ev.id)
	p.logf(res.Instance, "%s", line)
	return res
}

// initialize starts a process for the instance and waits until it asks for
// its first event, setting ev.deadline. A fail answer means the init failed
// and the invoke fails with it.
//
// A new instance's init has InitLimit and does not count against the
// function's timeout. If it fails or overruns, Lambda tries once more inside
// the invoke, and that init shares the function's timeout with the handler;
// so does every init of an instance that was reset.
func (p *Pool) initialize(in *instance, ev *event) (*proc, *answer, error) {
	p.mu.Lock()
	fresh := !in.reset
	p.mu.Unlock()
	if fresh {
		pr, fail, err := p.spawn(in, ev, false)
		if err != nil || fail != nil {
			return nil, fail, err
		}
		st := pr.waitInit(time.Now().Add(initLimit), p.closing)
		switch st.kind {
		case initReady:
			ev.deadline = time.Now().Add(p.fn.Timeout)
			return pr, nil, nil
		case initClosed:
			return nil, nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
		}
		p.abandon(in, pr, st.errorType())
		p.logf(in.id, "INIT_REPORT Phase: init Status: error Error Type: %s", st.errorType())
	}
	ev.deadline = time.Now().Add(p.fn.Timeout)
	pr, fail, err := p.spawn(in, ev, true)
	if err != nil || fail != nil {
		return nil, fail, err
	}
	st := pr.waitInit(ev.deadline, p.closing)
	switch st.kind {
	case initReady:
		return pr, nil, nil
	case initClosed:
		return nil, nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
	p.abandon(in, pr, st.errorType())
	p.logf(in.id, "INIT_REPORT Phase: invoke Status: error Error Type: %s", st.errorType())
	var a answer
	switch st.kind {
	case initPosted:
		a = answer{payload: st.payload, failed: true}
	case initExited:
		a = exitAnswer(ev.id, pr.exitReason)
	default: // initTimedOut
		a = p.timeoutAnswer(ev)
		p.logf(in.id, "%s", timeoutLine(a))
	}
	return nil, &a, nil
}

// run hands ev to a process that is initialised and waits for its answer.
// gone reports that the process ended before it took the event.
func (p *Pool) run(in *instance, pr *proc, ev *event) (a answer, gone bool, err error) {
	timer := time.NewTimer(time.Until(ev.deadline))
	defer timer.Stop()
	select {
	case pr.events <- ev:
	case <-pr.exited:
		p.abandon(in, pr, "")
		return answer{}, true, nil
	case <-timer.C:
		// The runtime never asked for the event: the invoke still times out.
		p.abandon(in, pr, "")
		a = p.timeoutAnswer(ev)
		p.logf(in.id, "%s", timeoutLine(a))
		return a, false, nil
	case <-p.closing:
		return answer{}, false, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
	select {
	case a = <-ev.done:
		return a, false, nil
	case <-pr.exited:
		select {
		case a = <-ev.done: // it answered, then exited (a panic, reported first)
			return a, false, nil
		default:
		}
		p.abandon(in, pr, "")
		return exitAnswer(ev.id, pr.exitReason), false, nil
	case <-timer.C:
		// Lambda resets the environment: the process is killed, and the
		// next invoke here initialises a new one within its own timeout.
		p.abandon(in, pr, "")
		a = p.timeoutAnswer(ev)
		p.logf(in.id, "%s", timeoutLine(a))
		return a, false, nil
	case <-p.closing:
		return answer{}, false, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
}

// abandon kills a process that failed its init or its invoke, waits for it
// and resets its instance; errorType, when set, is recorded as why its init
// failed.
func (p *Pool) abandon(in *instance, pr *proc, errorType string) {
	pr.kill()
	<-pr.exited
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.proc == pr {
		in.proc = nil
	}
	in.reset = true
	if errorType != "" {
		pr.cold.Error = errorType
	}
}

func timeoutLine(a answer) string {
	var e errorObject
	_ = json.Unmarshal(a.payload, &e)
	return e.ErrorMessage
}
