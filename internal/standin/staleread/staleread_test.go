package staleread_test

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/staleread"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// clock is the proxy's time in nanoseconds, moved by the tests: no test
// sleeps.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

type fixture struct {
	db    *dynamodb.Client // through the proxy
	table string
	clock *clock
	proxy *staleread.Server
	// engine is dynalite's endpoint, behind the proxy.
	engine string
}

// setup starts a proxy in front of dynalite and creates, through it, a
// table like doclib's: pk and sk, a local index on ord, a sparse global
// index on ws projecting its keys and gen.
func setup(t *testing.T) *fixture {
	t.Helper()
	srv := dynalitetest.Start(t)
	clk := &clock{}
	clk.ns.Store(time.Unix(1_700_000_000, 0).UnixNano())
	p, err := staleread.Start(srv.Endpoint, staleread.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	db := dynamodb.New(dynamodb.Options{Region: dynalitetest.Region, BaseEndpoint: aws.String(p.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient:  &http.Client{Transport: crcChecked{t, http.DefaultTransport}}})
	f := &fixture{db: db, table: srv.TableName(t), clock: clk, proxy: p, engine: srv.Endpoint}
	attr := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	keyElem := func(n string, kt types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: kt}
	}
	ctx := context.Background()
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(f.table), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{attr("pk"), attr("sk"), attr("ord"), attr("ws")},
		KeySchema:            []types.KeySchemaElement{keyElem("pk", types.KeyTypeHash), keyElem("sk", types.KeyTypeRange)},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{IndexName: aws.String("byOrder"),
			KeySchema:  []types.KeySchemaElement{keyElem("pk", types.KeyTypeHash), keyElem("ord", types.KeyTypeRange)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("byWorkspace"),
			KeySchema:  []types.KeySchemaElement{keyElem("ws", types.KeyTypeHash)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"gen"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(f.table)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	return f
}

// crcChecked fails the test on an answer whose X-Amz-Crc32 is not the
// CRC32 of its body: the AWS SDKs check it ("DynamoDB responses can include
// a X-Amz-Crc32 header with the CRC32 checksum value of the response body",
// aws-sdk-go-v2 service/dynamodb/internal/customizations), and this one
// only when it closes the body, without failing the call.
type crcChecked struct {
	t    *testing.T
	next http.RoundTripper
}

func (c crcChecked) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, body, err := roundTrip(c.next, r)
	if err != nil {
		return resp, err
	}
	if want := strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10); resp.Header.Get("X-Amz-Crc32") != want {
		c.t.Errorf("%s: X-Amz-Crc32 %q, want %s, the CRC32 of %s", r.Header.Get("X-Amz-Target"), resp.Header.Get("X-Amz-Crc32"), want, body)
	}
	return resp, nil
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

type item = map[string]types.AttributeValue

func key(pk, sk string) item { return item{"pk": s(pk), "sk": s(sk)} }

func (f *fixture) put(t *testing.T, it item) {
	t.Helper()
	if _, err := f.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: it}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) setV(t *testing.T, k item, v string) {
	t.Helper()
	_, err := f.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(f.table), Key: k,
		UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: item{":v": s(v)}})
	if err != nil {
		t.Fatal(err)
	}
}

// get reads an item's v ("" when there is no item).
func (f *fixture) get(t *testing.T, k item, consistent bool) string {
	t.Helper()
	res, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: k, ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		t.Fatal(err)
	}
	return vOf(res.Item)
}

func vOf(it item) string {
	if it == nil {
		return ""
	}
	if v, ok := it["v"].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return "(no v)"
}

// vs lists the items' v, sorted.
func vs(items []item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, vOf(it))
	}
	slices.Sort(out)
	return out
}

func TestEventualGetItemMissesARecentPut(t *testing.T) {
	f := setup(t)
	k := key("P", "a")
	f.put(t, item{"pk": s("P"), "sk": s("a"), "v": s("1")})
	if got := f.get(t, k, false); got != "" {
		t.Errorf("an eventual read just after the put: v %q, want no item", got)
	}
	if got := f.get(t, k, true); got != "1" {
		t.Errorf("a strongly consistent read just after the put: v %q, want 1", got)
	}
	f.clock.Add(staleread.DefaultWindow - time.Nanosecond)
	if got := f.get(t, k, false); got != "" {
		t.Errorf("an eventual read within the window: v %q, want no item", got)
	}
	f.clock.Add(time.Nanosecond)
	if got := f.get(t, k, false); got != "1" {
		t.Errorf("an eventual read once the window passed: v %q, want 1", got)
	}
	if got := f.get(t, k, true); got != "1" {
		t.Errorf("a strongly consistent read once the window passed: v %q, want 1", got)
	}
	if f.proxy.StaleItems() != 2 {
		t.Errorf("%d stale answers counted, want 2", f.proxy.StaleItems())
	}
}

// Updates and deletes show the image from before the oldest write within
// the window, projected as asked.
func TestEventualReadsShowTheEarlierImage(t *testing.T) {
	f := setup(t)
	k := key("P", "a")
	f.put(t, item{"pk": s("P"), "sk": s("a"), "v": s("1"), "m": &types.AttributeValueMemberM{Value: item{"x": s("X"), "y": s("Y")}}})
	f.clock.Add(2 * staleread.DefaultWindow)
	f.setV(t, k, "2")
	if got := f.get(t, k, false); got != "1" {
		t.Errorf("an eventual read after an update: v %q, want the earlier 1", got)
	}
	res, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: k,
		ProjectionExpression: aws.String("#v, m.x"), ExpressionAttributeNames: map[string]string{"#v": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := res.Item["m"].(*types.AttributeValueMemberM)
	if len(res.Item) != 2 || vOf(res.Item) != "1" || m == nil || len(m.Value) != 1 || m.Value["x"] == nil {
		t.Errorf("projected eventual read: %#v, want v 1 and m.x only", res.Item)
	}
	f.clock.Add(staleread.DefaultWindow / 2)
	f.setV(t, k, "3")
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: k}); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, k, false); got != "1" {
		t.Errorf("an eventual read after three writes within the window: v %q, want 1, from before the first", got)
	}
	f.clock.Add(staleread.DefaultWindow / 2)
	if got := f.get(t, k, false); got != "2" {
		t.Errorf("once the first write is out of the window: v %q, want 2", got)
	}
	if got := f.get(t, k, true); got != "" {
		t.Errorf("a strongly consistent read after the delete: v %q, want no item", got)
	}
	f.clock.Add(staleread.DefaultWindow)
	if got := f.get(t, k, false); got != "" {
		t.Errorf("an eventual read once every write is out of the window: v %q, want no item", got)
	}
}

// setupItems leaves in partition P: a (old), b (old, then updated), c
// (new) and d (old, then deleted), and in Q: q (new, written by a batch).
func setupItems(t *testing.T, f *fixture) {
	t.Helper()
	for _, sk := range []string{"a", "b", "d"} {
		f.put(t, item{"pk": s("P"), "sk": s(sk), "v": s(sk + "1"), "ord": s("o" + sk), "ws": s("W"), "gen": s("g1")})
	}
	f.clock.Add(2 * staleread.DefaultWindow)
	_, err := f.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(f.table), Key: key("P", "b"),
		UpdateExpression: aws.String("SET v = :v, gen = :g"), ExpressionAttributeValues: item{":v": s("b2"), ":g": s("g2")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: key("P", "d")}); err != nil {
		t.Fatal(err)
	}
	_, err = f.db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{f.table: {
		{PutRequest: &types.PutRequest{Item: item{"pk": s("P"), "sk": s("c"), "v": s("c1"), "ord": s("oc"), "ws": s("W"), "gen": s("g2")}}},
		{PutRequest: &types.PutRequest{Item: item{"pk": s("Q"), "sk": s("q"), "v": s("q1")}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBatchGetItemPerKey(t *testing.T) {
	f := setup(t)
	setupItems(t, f)
	keys := []item{key("P", "a"), key("P", "b"), key("P", "c"), key("P", "d"), key("Q", "q"), key("P", "none")}
	batch := func(consistent bool, projection string) []item {
		t.Helper()
		ka := types.KeysAndAttributes{Keys: keys, ConsistentRead: aws.Bool(consistent)}
		if projection != "" {
			ka.ProjectionExpression = aws.String(projection)
		}
		res, err := f.db.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{f.table: ka}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.UnprocessedKeys) > 0 {
			t.Fatalf("unprocessed keys %v", res.UnprocessedKeys)
		}
		return res.Responses[f.table]
	}
	if got, want := vs(batch(false, "")), []string{"a1", "b1", "d1"}; !slices.Equal(got, want) {
		t.Errorf("eventual BatchGetItem: %v, want %v (b before its update, d before its delete, neither c nor q)", got, want)
	}
	items := batch(false, "v")
	if got, want := vs(items), []string{"a1", "b1", "d1"}; !slices.Equal(got, want) {
		t.Errorf("eventual BatchGetItem projecting v: %v, want %v", got, want)
	}
	for _, it := range items {
		if len(it) != 1 {
			t.Errorf("eventual BatchGetItem projecting v returned %v: the keys the proxy needed must not show", it)
		}
	}
	if got, want := vs(batch(true, "")), []string{"a1", "b2", "c1", "q1"}; !slices.Equal(got, want) {
		t.Errorf("strongly consistent BatchGetItem: %v, want %v", got, want)
	}
	f.clock.Add(staleread.DefaultWindow)
	if got, want := vs(batch(false, "")), []string{"a1", "b2", "c1", "q1"}; !slices.Equal(got, want) {
		t.Errorf("eventual BatchGetItem after the window: %v, want %v", got, want)
	}
}

func TestQueryAndScanPerItem(t *testing.T) {
	f := setup(t)
	setupItems(t, f)
	ctx := context.Background()
	query := func(in *dynamodb.QueryInput) ([]item, int32) {
		t.Helper()
		in.TableName = aws.String(f.table)
		res, err := f.db.Query(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return res.Items, res.Count
	}
	partP := func(in *dynamodb.QueryInput) *dynamodb.QueryInput {
		in.KeyConditionExpression = aws.String("pk = :p")
		in.ExpressionAttributeValues = item{":p": s("P")}
		return in
	}
	items, n := query(partP(&dynamodb.QueryInput{}))
	// d, deleted within the window, is missing: the proxy sees only the
	// items the engine returns (docs/standin.md).
	if got, want := vs(items), []string{"a1", "b1"}; !slices.Equal(got, want) || n != 2 {
		t.Errorf("eventual Query: %v (Count %d), want %v", got, n, want)
	}
	items, _ = query(partP(&dynamodb.QueryInput{ProjectionExpression: aws.String("#v"), ExpressionAttributeNames: map[string]string{"#v": "v"}}))
	if got, want := vs(items), []string{"a1", "b1"}; !slices.Equal(got, want) {
		t.Errorf("eventual Query projecting v: %v, want %v", got, want)
	}
	for _, it := range items {
		if len(it) != 1 {
			t.Errorf("eventual Query projecting v returned %v: the keys the proxy needed must not show", it)
		}
	}
	items, _ = query(partP(&dynamodb.QueryInput{IndexName: aws.String("byOrder")}))
	if got, want := vs(items), []string{"a1", "b1"}; !slices.Equal(got, want) {
		t.Errorf("eventual Query of the local index: %v, want %v", got, want)
	}
	items, n = query(partP(&dynamodb.QueryInput{ConsistentRead: aws.Bool(true)}))
	if got, want := vs(items), []string{"a1", "b2", "c1"}; !slices.Equal(got, want) || n != 3 {
		t.Errorf("strongly consistent Query: %v (Count %d), want %v", got, n, want)
	}
	// The global index is read eventually only; it projects keys and gen.
	items, _ = query(&dynamodb.QueryInput{IndexName: aws.String("byWorkspace"), KeyConditionExpression: aws.String("ws = :w"),
		ExpressionAttributeValues: item{":w": s("W")}})
	gens := map[string]string{}
	for _, it := range items {
		if _, ok := it["v"]; ok {
			t.Errorf("the global index projects keys and gen, got %v", it)
		}
		gens[it["sk"].(*types.AttributeValueMemberS).Value] = it["gen"].(*types.AttributeValueMemberS).Value
	}
	if len(gens) != 2 || gens["a"] != "g1" || gens["b"] != "g1" {
		t.Errorf("eventual Query of the global index: %v, want a and b at g1", gens)
	}

	scan, err := f.db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(f.table)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := vs(scan.Items), []string{"a1", "b1"}; !slices.Equal(got, want) || scan.Count != 2 {
		t.Errorf("eventual Scan: %v (Count %d), want %v", got, scan.Count, want)
	}
	f.clock.Add(staleread.DefaultWindow)
	items, _ = query(partP(&dynamodb.QueryInput{}))
	if got, want := vs(items), []string{"a1", "b2", "c1"}; !slices.Equal(got, want) {
		t.Errorf("eventual Query after the window: %v, want %v", got, want)
	}
}

// A write the engine refuses is forgotten: it would otherwise hide the
// item from eventual reads for good.
func TestRefusedWritesAreForgotten(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	_, err := f.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: item{"pk": s("P"), "sk": s("c"), "v": s("1")},
		ConditionExpression: aws.String("attribute_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("conditional put of a missing item: %v, want ConditionalCheckFailedException", err)
	}
	f.put(t, item{"pk": s("P"), "sk": s("c"), "v": s("2")})
	f.clock.Add(staleread.DefaultWindow)
	if got := f.get(t, key("P", "c"), false); got != "2" {
		t.Errorf("an eventual read a window after the last write: %q, want 2", got)
	}
}

// bodies records the bodies of the answers a client reads.
type bodies struct {
	next http.RoundTripper
	got  [][]byte
}

func (b *bodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, body, err := roundTrip(b.next, r)
	if err == nil {
		b.got = append(b.got, body)
	}
	return resp, err
}

// roundTrip sends r with next and reads the answer's body, which it puts
// back for the client to read.
func roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, []byte, error) {
	resp, err := next.RoundTrip(r)
	if err != nil {
		return resp, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, body, nil
}

// TestReadsOfOtherItemsPassThrough: while an item is within the window, a
// Query of another partition and a BatchGetItem of other keys are the
// engine's answers byte for byte, not decoded and written again: the API's
// rate counters are written on every request, and rewriting every large
// answer made the stand-in's big answers miss their deadline.
func TestReadsOfOtherItemsPassThrough(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	f.put(t, item{"pk": s("doc#1"), "sk": s("a"), "v": s("one")})
	f.put(t, item{"pk": s("doc#1"), "sk": s("b"), "v": s("two")})
	f.clock.Add(2 * time.Second)
	f.setV(t, key("rate#k", "w"), "1") // within the window from now on

	client := func(endpoint string) (*dynamodb.Client, *bodies) {
		rec := &bodies{next: http.DefaultTransport}
		return dynamodb.New(dynamodb.Options{Region: dynalitetest.Region, BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
			HTTPClient:  &http.Client{Transport: rec}}), rec
	}
	viaProxy, proxied := client(f.proxy.URL)
	direct, engine := client(f.engine)
	query := &dynamodb.QueryInput{TableName: aws.String(f.table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": s("doc#1")}}
	batch := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		// One key: the engine answers a batch's items in any order.
		f.table: {Keys: []map[string]types.AttributeValue{key("doc#1", "a")}}}}
	for _, db := range []*dynamodb.Client{viaProxy, direct} {
		if _, err := db.Query(ctx, query); err != nil {
			t.Fatal(err)
		}
		if _, err := db.BatchGetItem(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if len(proxied.got) != 2 || len(engine.got) != 2 {
		t.Fatalf("%d and %d answers recorded, want 2 each", len(proxied.got), len(engine.got))
	}
	for i, op := range []string{"Query", "BatchGetItem"} {
		if !bytes.Equal(proxied.got[i], engine.got[i]) {
			t.Errorf("%s of items not written within the window: the proxy answered\n%s\nthe engine\n%s", op, proxied.got[i], engine.got[i])
		}
	}
	// The written item itself is still answered stale.
	if v := f.get(t, key("rate#k", "w"), false); v != "" {
		t.Errorf("an eventual read of the item written within the window: v=%q, want no item", v)
	}
}
