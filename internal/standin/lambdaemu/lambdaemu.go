// Package lambdaemu runs a function's bootstrap binary the way Lambda runs a
// function on an OS-only runtime (provided.al2023), so that a test sees what
// the deployed function would: an execution environment (an instance) is one
// process with its own Runtime API endpoint, started on demand, given one
// event at a time, and killed and initialised again after a timeout or a
// crash. The stand-in of the synthesized stack (internal/standin) runs every
// function of the template under a Pool.
//
// What Lambda does and this package copies, with where it is written down:
// the reserved environment variables and which of them OS-only runtimes do
// not get (Lambda developer guide, "Defined runtime environment variables");
// the Runtime API, its headers and its refusals (the guide's "Runtime API",
// and the error types and 6 MiB + 100 byte response limit of the Runtime
// Interface Emulator, aws/aws-lambda-runtime-interface-emulator); the 10 s
// init phase, retried inside the first invoke within the function's timeout,
// and the reset after a crash or timeout whose init then also runs inside the
// invoke ("Lambda execution environment lifecycle"); the timeout's error
// payload as Invoke returns it. What it does not copy is listed on Pool.
package lambdaemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

const (
	// Account is the account ID in the ARNs the emulator makes up.
	Account = "123456789012"
	// DefaultMaxConcurrency is how many instances a function may run at
	// once when Function.MaxConcurrency is 0.
	DefaultMaxConcurrency = 10
	// InitLimit is how long a new instance's init phase may take. Past it
	// Lambda stops the init and retries it inside the first invoke, where it
	// counts against the function's timeout.
	InitLimit = 10 * time.Second
	// MaxRequestSize is the largest event a synchronous invoke takes.
	MaxRequestSize = 6 * 1024 * 1024
	// MaxResponseSize is the largest response the Runtime API takes; a
	// larger one fails the invoke with Function.ResponseSizeTooLarge.
	MaxResponseSize = 6*1024*1024 + 100
)

// initLimit is InitLimit, shortened by the tests so that an init that
// overruns it does not cost them ten seconds.
var initLimit = InitLimit

// Errors of Invoke that Lambda's Invoke API would answer instead of the
// function. Each is wrapped with the function's name; test with errors.Is.
var (
	// ErrTooManyRequests: every instance the function may run is busy and
	// the caller's context ended while it waited for one.
	//lint:ignore ST1005 Lambda's own message, word for word
	ErrTooManyRequests = errors.New("TooManyRequestsException: Rate Exceeded.")
	// ErrRequestTooLarge: the event is over MaxRequestSize.
	ErrRequestTooLarge = fmt.Errorf("RequestTooLargeException: Request must be smaller than %d bytes for the InvokeFunction operation", MaxRequestSize)
	// ErrInvalidRequestContent: the event is not JSON.
	ErrInvalidRequestContent = errors.New("InvalidRequestContentException: Could not parse request body into json")
	// ErrClosed: the pool was closed before or during the invoke.
	ErrClosed = errors.New("pool closed")
)

// Function is one function as the template declares it.
type Function struct {
	Name     string            // FunctionName, e.g. doclib-demo-search
	Path     string            // the bootstrap executable
	Env      map[string]string // the template's Environment.Variables (resolved)
	Timeout  time.Duration     // the template's Timeout; 0: Lambda's default, 3 s
	MemoryMB int               // the template's MemorySize; 0: Lambda's default, 128
	// EphemeralMB is the template's EphemeralStorage.Size, the bound of
	// each instance's /tmp (tmp.go); 0: Lambda's default, 512.
	EphemeralMB int
	// MaxConcurrency is ReservedConcurrentExecutions when the template sets
	// it; 0 means DefaultMaxConcurrency. Invokes beyond it wait for an
	// instance, and fail with ErrTooManyRequests if their context ends.
	MaxConcurrency int
	// Account is the account's concurrency the function draws from: with a
	// MaxConcurrency (a reservation, which the caller registers with
	// AccountConcurrency.Reserve) it holds its own; without, each invoke also takes
	// one of the account's unreserved executions. nil: no account-wide
	// limit.
	Account *AccountConcurrency
	// Credentials gives each instance its AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when it starts, as Lambda
	// gives it the execution role's session; nil starts it without any.
	Credentials func() (accessKey, secret, token string)
	Region      string    // AWS_REGION; "" means us-east-1
	Logs        io.Writer // the instances' stdout and stderr, each line prefixed with name[instance]; nil discards them

	// Handler is the template's Handler (_HANDLER); "" means "bootstrap".
	Handler string
	// StreamRate is a streamed response's bandwidth after its burst, in
	// bytes a second; 0 is Lambda's, StreamRate. Tests that stream large
	// answers may raise it, and must say so.
	StreamRate float64

	// LogFormat, LogLevel and LogGroup are the template's LoggingConfig
	// (LogFormat, ApplicationLogLevel, LogGroup). Lambda passes the first
	// two as AWS_LAMBDA_LOG_FORMAT and AWS_LAMBDA_LOG_LEVEL only when they
	// are configured; the log group defaults to /aws/lambda/<name>.
	LogFormat, LogLevel, LogGroup string
}

// Result is one invocation's outcome as Lambda's Invoke returns it.
type Result struct {
	Payload       []byte // the response, or Lambda's error object {"errorMessage":...,"errorType":...}
	FunctionError string // "" on success, "Unhandled" on error (as Lambda's X-Amz-Function-Error)
	Instance      int    // which instance (execution environment, from 1) served it
	Cold          bool   // whether this invocation started the instance's process
	// MaxMemoryMB is the process's peak resident memory so far, in MiB
	// rounded up, as Lambda's REPORT line gives "Max Memory Used"; 0 where
	// the host does not say (it is read from /proc on Linux).
	MaxMemoryMB int
	// Duration is the REPORT line's: the invoke without its init, what
	// Lambda bills as the handler's time.
	Duration time.Duration
}

// ColdStart is one process start of an instance, for measuring what init
// costs where the function runs.
type ColdStart struct {
	Instance int // the instance it started a process for
	// InInvoke marks an init that ran inside an invoke and counted against
	// its timeout: after a reset, or when the first init failed or overran
	// InitLimit and Lambda tried again.
	InInvoke bool
	// Init is from process start until it first asked for an event (0 if it
	// never did).
	Init time.Duration
	// FirstAnswer is from process start until its first response or error
	// was posted (0 if none was).
	FirstAnswer time.Duration
	// Error is the error type that ended a failed init: Runtime.ExitError,
	// the type posted to init/error, Sandbox.Timedout, or
	// Runtime.InvalidEntrypoint when the binary could not be started.
	Error string
}

// Pool runs one function's instances.
//
// An instance keeps its number when it is reset: its next process is a cold
// start of the same instance, as Lambda re-initialises the environment.
//
// What it does not copy from Lambda: processes are not frozen between
// events, so work a function leaves running after its answer goes on; memory
// is not limited to MemoryMB; idle instances are never shut down (they live
// until Close); each instance's /tmp is a directory of the host's given as
// TMPDIR, bounded by EphemeralMB as tmp.go tells, and the rest of the host's
// file system is writable; the account-wide concurrency (Function.Account)
// holds invokes waiting rather than throttling them at once; and a template
// that sets a reserved variable runs, with Lambda's value, where Lambda's
// CreateFunction refuses it: call Function.Validate to refuse it.
type Pool struct {
	fn      Function
	arn     string
	slots   chan struct{}       // one token per running invoke, MaxConcurrency in all
	shared  *AccountConcurrency // the account's unreserved executions this function draws from, or nil
	closing chan struct{}

	mu        sync.Mutex
	closed    bool
	wg        sync.WaitGroup // invokes in flight and process monitors
	instances []*instance
	idle      []*instance // free instances, most recently used last
	cold      []*ColdStart
}

// instance is one execution environment. It is held by at most one invoke.
type instance struct {
	id   int
	proc *proc  // nil: no process; the next invoke starts one
	tmp  string // its /tmp (TMPDIR), made when its first process starts; kept across invokes and resets
	// reset is set once a process of this instance died or was killed: its
	// next init runs inside an invoke, within the function's timeout.
	reset bool
}

// Start prepares a pool for fn. It starts nothing: instances start on
// demand, as invokes need them.
func Start(fn Function) *Pool {
	if fn.Timeout <= 0 {
		fn.Timeout = 3 * time.Second
	}
	if fn.MemoryMB <= 0 {
		fn.MemoryMB = 128
	}
	if fn.EphemeralMB <= 0 {
		fn.EphemeralMB = DefaultEphemeralMB
	}
	var shared *AccountConcurrency
	if fn.MaxConcurrency <= 0 {
		fn.MaxConcurrency = DefaultMaxConcurrency
		shared = fn.Account
	}
	if fn.Region == "" {
		fn.Region = "us-east-1"
	}
	if fn.Handler == "" {
		fn.Handler = "bootstrap"
	}
	if fn.LogGroup == "" {
		fn.LogGroup = "/aws/lambda/" + fn.Name
	}
	// An absolute path, so that the process's working directory (the code's
	// directory, as LAMBDA_TASK_ROOT is on Lambda) does not change what
	// runs.
	if abs, err := filepath.Abs(fn.Path); err == nil {
		fn.Path = abs
	}
	return &Pool{
		fn:      fn,
		arn:     fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", fn.Region, Account, fn.Name),
		slots:   make(chan struct{}, fn.MaxConcurrency),
		shared:  shared,
		closing: make(chan struct{}),
	}
}

// Invoke runs one synchronous invocation (RequestResponse). The function's
// own failures (errors, crashes, timeouts, failed inits, oversized
// responses) are in the Result, as Lambda returns them; err is only for what
// Lambda's API would refuse (ErrTooManyRequests, ErrRequestTooLarge,
// ErrInvalidRequestContent), for the emulator's own failures, and for ctx.
// When ctx ends mid-invoke the function runs on to its answer or timeout, as
// on Lambda, and its instance stays busy until then.
func (p *Pool) Invoke(ctx context.Context, payload []byte) (Result, error) {
	in, err := p.admit(ctx, payload)
	if err != nil {
		return Result{}, err
	}
	done := p.launch(in, payload, nil)
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ctx.Err())
	}
}

// admit does what Lambda's API does before an invocation runs: it refuses a
// payload that is too large or not JSON, and takes a free instance, waiting
// for one while ctx lasts.
func (p *Pool) admit(ctx context.Context, payload []byte) (*instance, error) {
	if len(payload) > MaxRequestSize {
		return nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrRequestTooLarge)
	}
	if len(payload) > 0 && !json.Valid(payload) {
		return nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrInvalidRequestContent)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("lambdaemu: %s: %w (%d instances busy): %w", p.fn.Name, ErrTooManyRequests, cap(p.slots), ctx.Err())
	case <-p.closing:
		return nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
	if p.shared != nil {
		if err := p.shared.acquire(ctx, p.closing); err != nil {
			<-p.slots
			return nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.free()
		return nil, fmt.Errorf("lambdaemu: %s: %w", p.fn.Name, ErrClosed)
	}
	in := p.take()
	p.wg.Add(1)
	return in, nil
}

// outcome is how an invocation ended.
type outcome struct {
	res Result
	err error
}

// launch runs an admitted invocation on in, streaming its response through
// sk when it is not nil, and gives back the instance and its slot when done.
func (p *Pool) launch(in *instance, payload []byte, sk *sink) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		defer p.wg.Done()
		res, err := p.execute(in, payload, sk)
		// The instance is free again before its slot is: an invoke that
		// waited for the slot then finds it warm.
		p.mu.Lock()
		p.idle = append(p.idle, in)
		p.mu.Unlock()
		p.free()
		done <- outcome{res, err}
	}()
	return done
}

// free gives back an invoke's slot and its unreserved execution.
func (p *Pool) free() {
	if p.shared != nil {
		p.shared.release()
	}
	<-p.slots
}

// take picks the instance for an invoke that holds a slot: a warm one if
// any (the most recently used, as Lambda keeps few environments warm), else
// one without a process, else a new one. The number of instances never
// exceeds the slots. Called with p.mu held.
func (p *Pool) take() *instance {
	pick := -1
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].proc != nil {
			pick = i
			break
		}
	}
	if pick < 0 && len(p.idle) > 0 {
		pick = len(p.idle) - 1
	}
	if pick >= 0 {
		in := p.idle[pick]
		p.idle = append(p.idle[:pick], p.idle[pick+1:]...)
		return in
	}
	in := &instance{id: len(p.instances) + 1}
	p.instances = append(p.instances, in)
	return in
}

// ColdStarts lists every process start so far, in order.
func (p *Pool) ColdStarts() []ColdStart {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ColdStart, len(p.cold))
	for i, c := range p.cold {
		out[i] = *c
	}
	return out
}

// Close kills every instance's process and waits for invokes in flight,
// which end with ErrClosed. It is safe to call more than once.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.closing)
	var procs []*proc
	var dirs []string
	for _, in := range p.instances {
		if in.proc != nil {
			procs = append(procs, in.proc)
		}
		if in.tmp != "" {
			dirs = append(dirs, in.tmp)
		}
	}
	p.mu.Unlock()
	for _, pr := range procs {
		pr.kill()
	}
	p.wg.Wait()
	var errs []error
	for _, d := range dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	return errors.Join(errs...)
}
