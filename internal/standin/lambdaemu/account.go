package lambdaemu

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// DefaultAccountConcurrency is an account's concurrent executions in a
// Region when AccountConcurrency.Concurrency is 0: Lambda's default quota. New accounts
// often have far less (10 is common), and an operator raises it through
// Service Quotas.
const DefaultAccountConcurrency = 1000

// minUnreserved is what Lambda keeps unreserved on an account whose quota is
// above it: "You can reserve up to the Unreserved account concurrency value
// that is shown, minus 100 for functions that don't have reserved
// concurrency" (Lambda Developer Guide, "Configuring reserved concurrency for
// a function").
const minUnreserved = 100

// AccountConcurrency is the Lambda concurrency of one account in one Region, which
// every function of every stack there shares: the functions that reserve
// concurrency hold theirs, and the others draw from what is left. As Lambda
// does, it refuses a reservation that would leave less unreserved than its
// minimum, and holds invokes of unreserved functions beyond what is left
// (Pool.Invoke waits for one to end, and fails with ErrTooManyRequests if
// its context ends first).
type AccountConcurrency struct {
	// Concurrency is the account's ConcurrentExecutions quota; 0 is
	// DefaultAccountConcurrency.
	Concurrency int

	mu       sync.Mutex
	reserved map[string]int // by function name
	running  int            // invokes of unreserved functions in flight
	freed    chan struct{}  // closed and replaced when one ends
}

// Quota is Concurrency or its default.
func (a *AccountConcurrency) Quota() int {
	if a.Concurrency > 0 {
		return a.Concurrency
	}
	return DefaultAccountConcurrency
}

// MinUnreserved is the least that must stay unreserved: 100, or the whole
// quota on an account whose quota is 100 or less, where no function can
// reserve anything (Lambda's error quotes the minimum: on an account with a
// quota of 10, "below its minimum value of [10]").
func (a *AccountConcurrency) MinUnreserved() int { return min(minUnreserved, a.Quota()) }

// Unreserved is what the functions without a reservation share.
func (a *AccountConcurrency) Unreserved() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.unreserved()
}

func (a *AccountConcurrency) unreserved() int {
	n := a.Quota()
	for _, r := range a.reserved {
		n -= r
	}
	return n
}

// Reserve sets function's reserved concurrency, as PutFunctionConcurrency
// (or a template's ReservedConcurrentExecutions) does; 0 removes it. It
// fails as Lambda does when what would be left unreserved is below
// MinUnreserved.
func (a *AccountConcurrency) Reserve(function string, n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < 0 {
		return fmt.Errorf("lambdaemu: %s: InvalidParameterValueException: ReservedConcurrentExecutions %d is below 0", function, n)
	}
	left := a.unreserved() + a.reserved[function] - n
	if n > 0 && left < a.MinUnreserved() {
		return fmt.Errorf("lambdaemu: %s: InvalidParameterValueException: Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [%d]. (account quota %d, reserved by others %s)",
			function, a.MinUnreserved(), a.Quota(), a.describe(function))
	}
	if a.reserved == nil {
		a.reserved = map[string]int{}
	}
	if n == 0 {
		delete(a.reserved, function)
	} else {
		a.reserved[function] = n
	}
	return nil
}

// describe lists the other functions' reservations, for an error.
func (a *AccountConcurrency) describe(except string) string {
	var parts []string
	for name, n := range a.reserved {
		if name != except {
			parts = append(parts, fmt.Sprintf("%s=%d", name, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// acquire takes one of the unreserved executions for an invoke, waiting
// while ctx lasts; release gives it back.
func (a *AccountConcurrency) acquire(ctx context.Context, closing <-chan struct{}) error {
	for {
		a.mu.Lock()
		if a.freed == nil {
			a.freed = make(chan struct{})
		}
		if a.running < a.unreserved() {
			a.running++
			a.mu.Unlock()
			return nil
		}
		wait, busy := a.freed, a.running
		a.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("%w (the account's %d unreserved executions are busy): %w", ErrTooManyRequests, busy, ctx.Err())
		case <-closing:
			return ErrClosed
		}
	}
}

func (a *AccountConcurrency) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	if a.freed != nil {
		close(a.freed)
		a.freed = nil
	}
}
