package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/staleread"
	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/service"
)

// TestAuthenticationSeesWhatWasJustWritten: what lets a key in (the key,
// its device, its workspace) is read strongly consistent, so a key works
// the moment it is written. Through staleread with a clock that never
// moves, an eventually consistent read never sees a write: any of the three
// reads made eventually consistent again fails this test. On AWS that
// refusal is cached by API Gateway for the authorizer's TTL (issue 25).
func TestAuthenticationSeesWhatWasJustWritten(t *testing.T) {
	srv := dynalitetest.Start(t)
	frozen := time.Unix(1_700_000_000, 0)
	p, err := staleread.Start(srv.Endpoint, staleread.Options{Now: func() time.Time { return frozen }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	tbl := newTableVia(t, srv, dynamodb.New(dynamodb.Options{Region: dynalitetest.Region,
		BaseEndpoint: aws.String(p.URL), Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}))
	ctx := context.Background()
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(ctx, d, "g1", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := service.New(dynamo.NewStore(tbl), nil)

	// A key of a device, its device and its workspace, all just written.
	pr, err := svc.Authenticate(ctx, fixture.KeyFull)
	if err != nil || pr.WorkspaceID != "ws_a" || pr.KeyID != "key_full" {
		t.Errorf("a key imported a moment ago: %+v, %v; want key_full of ws_a", pr, err)
	}
	// An operator's key, created a moment ago.
	id, secret, err := tbl.CreateKey(ctx, dynamo.NewKey{WorkspaceID: "ws_b", Libraries: []string{"*"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := svc.Authenticate(ctx, secret); err != nil || pr.KeyID != id {
		t.Errorf("a key created a moment ago: %+v, %v; want %s", pr, err, id)
	}
	// An operator's key of one library, made right after the import, then
	// revoked at once: it stops working.
	id, secret, err = tbl.CreateKey(ctx, dynamo.NewKey{WorkspaceID: "ws_b", Libraries: []string{"lib_b1"}}, time.Now())
	if err != nil {
		t.Fatalf("a key of a library imported a moment ago: %v", err)
	}
	if err := tbl.RevokeKey(ctx, "ws_b", id); err != nil {
		t.Fatalf("revoking a key created a moment ago: %v", err)
	}
	if pr, err := svc.Authenticate(ctx, secret); err == nil {
		t.Errorf("a key revoked a moment ago still lets %+v in", pr)
	}
	// The balance an operator reads shows the credit just written.
	if n, err := dynamo.NewLedger(tbl).Balance(ctx, "ws_a"); err != nil || n != 100 {
		t.Errorf("balance of ws_a a moment after the import: %d, %v; want 100", n, err)
	}
	// The model did hide the writes from eventually consistent reads.
	if libs, err := dynamo.NewStore(tbl).Libraries(ctx, "ws_a"); err != nil || len(libs) != 0 {
		t.Errorf("an eventual read of ws_a's libraries a moment after the import: %d, %v; want none, or the test proves nothing", len(libs), err)
	}
}
