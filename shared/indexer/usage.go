package indexer

import (
	"context"
	"errors"
	"fmt"

	doclib "github.com/doclib/doclib/shared"
)

// UsageKeys registers doclib keys with API Gateway's usage plans, so that the
// plan of a key's tier throttles it (shared/aws/usageplan implements it through an
// adapter in shared/aws/lambdaapp).
type UsageKeys interface {
	// Put makes the key's usage identifier a member of exactly its tier's plan.
	Put(ctx context.Context, h doclib.KeyHash, tier string) error
	// Delete removes the key's usage identifier; a missing one is no error.
	Delete(ctx context.Context, h doclib.KeyHash) error
}

// KeySource is what the usage sync reads from the table. *dynamo.Store
// implements it.
type KeySource interface {
	// APIKey returns a key by hash, or doclib.ErrNotFound once it is gone.
	APIKey(ctx context.Context, h doclib.KeyHash) (*doclib.APIKey, error)
	// Workspace returns a workspace, or doclib.ErrNotFound: its plan is the tier.
	Workspace(ctx context.Context, id string) (*doclib.Workspace, error)
	// WorkspaceKeyHashes lists a workspace's keys: the fan-out of a plan change.
	WorkspaceKeyHashes(ctx context.Context, workspaceID string) ([]doclib.KeyHash, error)
}

// SyncKeys brings the usage registration of each of hashes up to date, as
// the stream does for a key's record, and returns the hashes it failed (each
// logged). doclib-admin keys sync calls it for every key of the table, to
// repair registrations that failed past the stream's retries.
func (x *Indexer) SyncKeys(ctx context.Context, hashes []doclib.KeyHash) map[doclib.KeyHash]bool {
	return x.syncKeys(ctx, hashes)
}

// syncKeys brings the usage registration of each key up to date, reading the
// key and its workspace again as the documents are (a record only says "look
// at this key again"), and returns the hashes it failed.
func (x *Indexer) syncKeys(ctx context.Context, hashes []doclib.KeyHash) map[doclib.KeyHash]bool {
	failed := map[doclib.KeyHash]bool{}
	log := x.logger()
	for _, h := range hashes {
		if err := x.syncKey(ctx, h); err != nil {
			log.Error("indexer: usage key", "key", h.String()[:12], "error", err)
			failed[h] = true
		}
	}
	return failed
}

func (x *Indexer) syncKey(ctx context.Context, h doclib.KeyHash) error {
	k, err := x.Keys.APIKey(ctx, h)
	if errors.Is(err, doclib.ErrNotFound) {
		return x.Usage.Delete(ctx, h)
	}
	if err != nil {
		return fmt.Errorf("read key: %w", err)
	}
	ws, err := x.Keys.Workspace(ctx, k.WorkspaceID)
	if errors.Is(err, doclib.ErrNotFound) {
		// A key whose workspace is gone authenticates no request: take it
		// out of every plan.
		return x.Usage.Delete(ctx, h)
	}
	if err != nil {
		return fmt.Errorf("read workspace %s: %w", k.WorkspaceID, err)
	}
	return x.Usage.Put(ctx, h, string(ws.Plan))
}
