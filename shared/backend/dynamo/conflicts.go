package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
)

// maxListedProblems caps the problems a refusal lists, so that a data set
// wrong everywhere still gives a message a person can read.
const maxListedProblems = 20

// refused is an import refused before its first write: the data set is valid
// on its own but cannot go into this table. reason says why, as a sentence
// start ("the data set does not fit DynamoDB"). It is the *doclib.DataSetError
// that dataset.Load returns for a data set wrong in itself.
func refused(reason string, problems []string) *doclib.DataSetError {
	e := &doclib.DataSetError{Reason: reason + ", nothing was written", Problems: problems}
	if len(problems) > maxListedProblems {
		e.Problems, e.More = problems[:maxListedProblems], len(problems)-maxListedProblems
	}
	return e
}

// claim is an item the data set would write under a key that carries no
// workspace: whoever holds that key in the table owns it for every workspace.
type claim struct {
	pk, sk string
	ws     string // the workspace the data set gives it
	what   string // "document doc_1", for messages
	keyID  string // for a key's lookup item: the data set's key ID
}

// claims lists the data set's globally keyed items, one per partition the
// import writes into (docs/dynamodb.md, "Items"):
//   - DOC#<doc>, through its A item: the document, its edges and its
//     recordings all live in that partition, so a recording ID reused in
//     another workspace writes under another document and overwrites nothing;
//   - LIB#<lib>, through its G#META item, which every import writes: the
//     library's list copies and its graph;
//   - KEY#<sha256 of the secret>: the key's lookup item, what a secret logs
//     into.
//
// Workspaces, devices, key listings, library items and slugs are keyed under
// WS#<ws>: the same ID in two workspaces is two items, so they cannot clash.
func claims(d *doclib.DataSet) []claim {
	out := make([]claim, 0, len(d.Documents)+len(d.Libraries)+len(d.APIKeys))
	for _, doc := range d.Documents {
		out = append(out, claim{pk: pkDocument(doc.ID), sk: skDocument, ws: doc.WorkspaceID, what: "document " + doc.ID})
	}
	for _, l := range d.Libraries {
		out = append(out, claim{pk: pkLibrary(l.ID), sk: skGraphMeta, ws: l.WorkspaceID, what: "library " + l.ID})
	}
	for _, k := range d.APIKeys {
		out = append(out, claim{pk: pkKey(k.Hash), sk: skKey, ws: k.WorkspaceID, what: "key " + k.ID, keyID: k.ID})
	}
	return out
}

// owner is what the table says about a claimed key.
type owner struct {
	ws    string // imported items carry ws; operators' keys only workspaceId
	keyID string
}

// checkOwnership refuses a data set that reuses a document, library or key
// secret that another workspace holds in the table: the import would overwrite
// that workspace's item, and the other workspace's key would then log into this
// one (or its document be replaced). Items this workspace already holds (any
// earlier generation, a half-finished import) are no conflict, so re-imports,
// --prune and the re-run of an interrupted import work as before. A move of an
// ID from one workspace to another is refused too: the old owner's edges and
// recordings would stay in the partition until pruned, visible to the new one.
//
// It reads with BatchGetItem, 100 keys a request, opt.Workers requests at a
// time, strongly consistent so that an import finished a moment ago is seen.
// Only the owner's attributes are returned.
func (t *Table) checkOwnership(ctx context.Context, d *doclib.DataSet, opt ImportOptions) error {
	cl := claims(d)
	// One key per request at most: a batch with a key twice is refused.
	seen := make(map[string]bool, len(cl))
	keys := make([]item, 0, len(cl))
	for _, c := range cl {
		if !seen[c.pk] {
			seen[c.pk] = true
			keys = append(keys, key(c.pk, c.sk))
		}
	}
	owners, err := t.owners(ctx, keys, opt)
	if err != nil {
		return fmt.Errorf("dynamo: import: check the data set's IDs against %s: %w", t.Name, err)
	}
	fileWorkspaces := make(map[string]bool, len(d.Workspaces))
	for _, w := range d.Workspaces {
		fileWorkspaces[w.ID] = true
	}
	var problems []string
	for _, c := range cl {
		o, ok := owners[c.pk]
		if !ok || o.ws == c.ws {
			continue
		}
		move := ""
		if fileWorkspaces[o.ws] {
			move = " (to move it, first import the data set without it, with --prune)"
		}
		if c.keyID != "" { // never the secret, nor its hash: the key IDs say which
			problems = append(problems, fmt.Sprintf("key %s has the same secret as key %s of workspace %s in table %s; secrets are global: give key %s a new secret in the data set",
				c.keyID, o.keyID, o.ws, t.Name, c.keyID))
			continue
		}
		problems = append(problems, fmt.Sprintf("%s already belongs to workspace %s in table %s; IDs are global: rename it in the data set%s",
			c.what, o.ws, t.Name, move))
	}
	if len(problems) > 0 {
		return refused("the data set uses IDs or key secrets of other workspaces in table "+t.Name, problems)
	}
	return nil
}

// owners reads the workspace of each key that exists, by partition key.
func (t *Table) owners(ctx context.Context, keys []item, opt ImportOptions) (map[string]owner, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = 8
	}
	out := make(map[string]owner)
	var mu sync.Mutex
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for start := 0; start < len(keys); start += batchGetLimit {
		chunk := keys[start:min(start+batchGetLimit, len(keys))]
		g.Go(func() error {
			items, err := t.getProjected(gctx, chunk)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, it := range items {
				var o struct {
					PK          string `dynamodbav:"pk"`
					WS          string `dynamodbav:"ws"`
					WorkspaceID string `dynamodbav:"workspaceId"`
					ID          string `dynamodbav:"id"`
				}
				if err := attributevalue.UnmarshalMap(it, &o); err != nil {
					mu.Unlock()
					return fmt.Errorf("decode: %w", err)
				}
				ws := o.WS
				if ws == "" {
					ws = o.WorkspaceID
				}
				out[o.PK] = owner{ws: ws, keyID: o.ID}
			}
			mu.Unlock()
			report(opt, "checking", int(done.Add(int64(len(chunk)))), len(keys))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// getProjected is one BatchGetItem of at most 100 keys, returning only the
// owner's attributes, with the unprocessed keys retried as patiently as the
// writer retries its items: a bulk load can wait longer than a request.
func (t *Table) getProjected(ctx context.Context, keys []item) ([]item, error) {
	pending := map[string]types.KeysAndAttributes{t.Name: {Keys: keys, ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#pk, #ws, #wsid, #id"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#ws": attrWS, "#wsid": "workspaceId", "#id": "id"}}}
	var out []item
	for attempt := 0; len(pending[t.Name].Keys) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= maxWriteAttempts {
				return nil, fmt.Errorf("%d keys still unprocessed after %d attempts", len(pending[t.Name].Keys), attempt)
			}
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := t.Client.BatchGetItem(cctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		cancel()
		var tired *retry.MaxAttemptsError
		switch {
		case errors.As(err, &tired) && ctx.Err() == nil:
			continue // the SDK's retries ran out on throttling: wait and ask again
		case err != nil:
			return nil, err
		}
		out = append(out, res.Responses[t.Name]...)
		pending = res.UnprocessedKeys
	}
	return out, nil
}
