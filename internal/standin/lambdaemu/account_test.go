package lambdaemu

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReservationsLeaveTheMinimum: as Lambda does, an account keeps 100
// executions unreserved, and an account whose quota is 100 or less (new
// accounts often have 10) cannot reserve any.
func TestReservationsLeaveTheMinimum(t *testing.T) {
	small := &AccountConcurrency{Concurrency: 10}
	err := small.Reserve("doclib-demo-indexer", 1)
	if err == nil || !strings.Contains(err.Error(), "below its minimum value of [10]") {
		t.Fatalf("reserving 1 of 10: %v, want Lambda's refusal quoting the minimum [10]", err)
	}
	if small.Unreserved() != 10 {
		t.Fatalf("a refused reservation left %d unreserved", small.Unreserved())
	}

	def := &AccountConcurrency{}
	if err := def.Reserve("a", 600); err != nil {
		t.Fatal(err)
	}
	if err := def.Reserve("b", 300); err != nil {
		t.Fatalf("900 of 1,000 reserved: %v", err)
	}
	if err := def.Reserve("c", 1); err == nil || !strings.Contains(err.Error(), "minimum value of [100]") || !strings.Contains(err.Error(), "a=600, b=300") {
		t.Fatalf("the 901st: %v, want the refusal naming the others' reservations", err)
	}
	if err := def.Reserve("b", 400); err == nil {
		t.Fatal("raising b past the minimum was allowed")
	}
	if err := def.Reserve("b", 0); err != nil || def.Unreserved() != 400 {
		t.Fatalf("removing b's reservation: %v, %d unreserved", err, def.Unreserved())
	}
}

// TestUnreservedFunctionsShareTheAccount: functions without a reservation
// share what the account has left; a reserved function does not draw from
// it.
func TestUnreservedFunctionsShareTheAccount(t *testing.T) {
	acct := &AccountConcurrency{Concurrency: 101}
	if err := acct.Reserve("reserved", 1); err != nil {
		t.Fatal(err)
	}
	acct.running = acct.Unreserved() - 1 // all but one taken by other functions
	a := start(t, "fn", Function{Name: "a", Account: acct, Timeout: 10 * time.Second})
	b := start(t, "fn", Function{Name: "b", Account: acct})
	r := start(t, "fn", Function{Name: "reserved", MaxConcurrency: 1, Account: acct})
	busy := make(chan Result)
	go func() { busy <- invoke(t, a, `{"op":"sleep","ms":800}`) }()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.Invoke(ctx, []byte(`{"op":"echo"}`)); !errors.Is(err, ErrTooManyRequests) {
		t.Errorf("another function while the account's last unreserved execution is busy: %v, want TooManyRequests", err)
	}
	if res := invoke(t, r, `{"op":"echo"}`); res.FunctionError != "" {
		t.Errorf("the reserved function: %s", res.Payload)
	}
	<-busy
	if res := invoke(t, b, `{"op":"echo"}`); res.FunctionError != "" {
		t.Errorf("once it is free: %s", res.Payload)
	}
	if acct.running != acct.Unreserved()-1 {
		t.Errorf("%d unreserved executions held after the invokes, want %d", acct.running, acct.Unreserved()-1)
	}
}
