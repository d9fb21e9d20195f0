package memory

import (
	"context"
	"sync"

	doclib "github.com/doclib/doclib/shared"
)

// Ledger is the AI-credit ledger of one process: balances in a map under a mutex,
// so that concurrent searches of one workspace never spend more than it has.
type Ledger struct {
	mu      sync.Mutex
	balance map[string]int64
}

var _ doclib.Ledger = (*Ledger)(nil)

// NewLedger starts every workspace at its AICredit.
func NewLedger(workspaces []*doclib.Workspace) *Ledger {
	l := &Ledger{balance: make(map[string]int64, len(workspaces))}
	for _, w := range workspaces {
		l.balance[w.ID] = w.AICredit
	}
	return l
}

// Spend implements doclib.Ledger.
func (l *Ledger) Spend(_ context.Context, workspaceID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.balance[workspaceID] <= 0 {
		return doclib.ErrNoCredit
	}
	l.balance[workspaceID]--
	return nil
}

// Refund implements doclib.Ledger.
func (l *Ledger) Refund(_ context.Context, workspaceID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.balance[workspaceID]++
	return nil
}

// Balance returns a workspace's credit, for tests and the admin tool.
func (l *Ledger) Balance(workspaceID string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.balance[workspaceID]
}
