package awscheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// dynamo checks DynamoDB (and DynamoDB Streams) calls and forwards the
// allowed ones to dynalite.
type dynamo struct {
	c      *Checker
	target *url.URL
	proxy  *httputil.ReverseProxy
	client *http.Client

	mu      sync.Mutex
	schemas map[string]*keySchema // by table name; only tables that exist
}

// keySchema is what dynamodb:LeadingKeys needs of a table: the partition
// key of the table and of each secondary index.
type keySchema struct {
	partition string
	indexes   map[string]string
}

func newDynamo(c *Checker, target *url.URL) *dynamo {
	d := &dynamo{c: c, target: target, schemas: map[string]*keySchema{},
		client: &http.Client{Timeout: 10 * time.Second}}
	d.proxy = proxyTo(target, c.logf, d.fail)
	return d
}

// ddbItem holds the fields of a single-item request that IAM's condition
// keys read; a transaction's Get, Put, Update, Delete and ConditionCheck
// elements have the same names.
type ddbItem struct {
	TableName                 string
	IndexName                 string
	Key                       map[string]json.RawMessage
	Item                      map[string]json.RawMessage
	AttributesToGet           []string
	ProjectionExpression      string
	UpdateExpression          string
	ConditionExpression       string
	FilterExpression          string
	KeyConditionExpression    string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]json.RawMessage
	AttributeUpdates          map[string]json.RawMessage
	Expected                  map[string]json.RawMessage
	KeyConditions             map[string]struct {
		AttributeValueList []json.RawMessage
		ComparisonOperator string
	}
	QueryFilter            map[string]json.RawMessage
	ScanFilter             map[string]json.RawMessage
	ReturnValues           string
	Select                 string
	ReturnConsumedCapacity string
}

// ddbRequest is a request body, whatever the operation.
type ddbRequest struct {
	ddbItem
	RequestItems  json.RawMessage
	TransactItems []map[string]ddbItem
	ResourceArn   string
	StreamArn     string
}

// keysAndAttributes is one table's part of a BatchGetItem.
type keysAndAttributes struct {
	Keys                     []map[string]json.RawMessage
	AttributesToGet          []string
	ProjectionExpression     string
	ExpressionAttributeNames map[string]string
}

// writeRequest is one element of a BatchWriteItem.
type writeRequest struct {
	PutRequest    *struct{ Item map[string]json.RawMessage }
	DeleteRequest *struct{ Key map[string]json.RawMessage }
}

// transactActions maps a TransactWriteItems/TransactGetItems element to
// the action IAM evaluates for it: each element needs the right of the
// single-item operation it stands for.
var transactActions = map[string]string{"Get": "GetItem", "Put": "PutItem", "Update": "UpdateItem",
	"Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}

func (d *dynamo) checks(ctx context.Context, r *http.Request, body []byte) ([]check, error) {
	target := r.Header.Get("X-Amz-Target")
	prefix, op, _ := strings.Cut(target, ".")
	if prefix != "DynamoDB_20120810" && prefix != "DynamoDBStreams_20120810" || op == "" {
		return nil, &apiError{http.StatusBadRequest, "UnknownOperationException", ""}
	}
	var in ddbRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &apiError{http.StatusBadRequest, "SerializationException", "Start of structure or map found where not expected."}
	}
	// ReturnConsumedCapacity is the request's, for each of its checks.
	rcc := func(keys map[string][]string) map[string][]string {
		if in.ReturnConsumedCapacity != "" {
			keys["dynamodb:ReturnConsumedCapacity"] = []string{in.ReturnConsumedCapacity}
		}
		return keys
	}
	action := "dynamodb:" + op

	switch op {
	case "BatchGetItem":
		var items map[string]keysAndAttributes
		if err := json.Unmarshal(in.RequestItems, &items); err != nil {
			return nil, &apiError{http.StatusBadRequest, "SerializationException", "RequestItems: " + err.Error()}
		}
		var out []check
		for _, table := range sortedKeys(items) {
			ka := items[table]
			s, err := d.schema(ctx, table)
			if err != nil {
				return nil, err
			}
			attrs := newNames()
			var leading []string
			for _, k := range ka.Keys {
				attrs.addKeys(k)
				leading = appendLeading(leading, s, k)
			}
			attrs.add(ka.AttributesToGet...)
			if err := attrs.expr("ProjectionExpression", ka.ProjectionExpression, ka.ExpressionAttributeNames); err != nil {
				return nil, err
			}
			keys := rcc(map[string][]string{})
			attrs.into(keys)
			if len(leading) > 0 {
				keys["dynamodb:LeadingKeys"] = leading
			}
			out = append(out, check{action: action, resource: d.tableARN(table), context: keys})
		}
		return out, nil

	case "BatchWriteItem":
		var items map[string][]writeRequest
		if err := json.Unmarshal(in.RequestItems, &items); err != nil {
			return nil, &apiError{http.StatusBadRequest, "SerializationException", "RequestItems: " + err.Error()}
		}
		var out []check
		for _, table := range sortedKeys(items) {
			s, err := d.schema(ctx, table)
			if err != nil {
				return nil, err
			}
			attrs := newNames()
			var leading []string
			for _, w := range items[table] {
				switch {
				case w.PutRequest != nil:
					attrs.addKeys(w.PutRequest.Item)
					leading = appendLeading(leading, s, w.PutRequest.Item)
				case w.DeleteRequest != nil:
					attrs.addKeys(w.DeleteRequest.Key)
					leading = appendLeading(leading, s, w.DeleteRequest.Key)
				}
			}
			keys := rcc(map[string][]string{})
			attrs.into(keys)
			if len(leading) > 0 {
				keys["dynamodb:LeadingKeys"] = leading
			}
			out = append(out, check{action: action, resource: d.tableARN(table), context: keys})
		}
		return out, nil

	case "TransactGetItems", "TransactWriteItems":
		var out []check
		for i, el := range in.TransactItems {
			if len(el) != 1 {
				return nil, &apiError{http.StatusBadRequest, "ValidationException", fmt.Sprintf("TransactItems[%d] must name exactly one action", i)}
			}
			for kind, it := range el {
				single, ok := transactActions[kind]
				if !ok {
					return nil, &apiError{http.StatusBadRequest, "ValidationException", fmt.Sprintf("TransactItems[%d]: unknown action %s", i, kind)}
				}
				ck, err := d.itemCheck(ctx, single, it, false)
				if err != nil {
					return nil, err
				}
				rcc(ck.context)
				out = append(out, ck)
			}
		}
		return out, nil

	case "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction":
		// PartiQL's actions (PartiQLSelect, ...) depend on the statement's
		// verb and table, which would take a parser to know.
		return nil, &apiError{http.StatusBadRequest, "AccessDeniedException", "the local stand-in does not evaluate PartiQL statements"}

	case "ListTables", "DescribeLimits", "DescribeEndpoints", "ListBackups", "ListGlobalTables", "ListExports", "ListImports":
		return []check{{action: action, resource: "*"}}, nil

	case "TagResource", "UntagResource", "ListTagsOfResource":
		return []check{{action: action, resource: in.ResourceArn}}, nil

	case "DescribeStream", "GetShardIterator":
		return []check{{action: action, resource: in.StreamArn}}, nil

	case "GetRecords":
		// The stream is named only inside the opaque shard iterator.
		return []check{{action: action, resource: d.tableARN("*") + "/stream/*"}}, nil
	}

	if in.TableName == "" {
		return []check{{action: action, resource: "*"}}, nil
	}
	ck, err := d.itemCheck(ctx, op, in.ddbItem, true)
	if err != nil {
		return nil, err
	}
	rcc(ck.context)
	return []check{ck}, nil
}

// itemCheck derives the evaluation of a single-table operation: the table
// (or, for Query and Scan, the index) and the fine-grained access keys
// DynamoDB documents for it. topLevel is false for a transaction's element,
// which takes no ReturnValues of its own.
func (d *dynamo) itemCheck(ctx context.Context, op string, it ddbItem, topLevel bool) (check, error) {
	resource := d.tableARN(it.TableName)
	ck := check{action: "dynamodb:" + op, resource: resource, context: map[string][]string{}}
	switch op {
	case "GetItem", "PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem", "Query", "Scan":
	default:
		return ck, nil // table-level operations (DescribeTable, ...) read no item
	}
	index := ""
	if op == "Query" || op == "Scan" {
		index = it.IndexName
		if index != "" {
			ck.resource = resource + "/index/" + index
		}
	}
	s, err := d.schema(ctx, it.TableName)
	if err != nil {
		return ck, err
	}

	attrs := newNames()
	attrs.addKeys(it.Key)
	attrs.addKeys(it.Item)
	attrs.add(it.AttributesToGet...)
	for _, m := range []map[string]json.RawMessage{it.AttributeUpdates, it.Expected, it.QueryFilter, it.ScanFilter} {
		attrs.addKeys(m)
	}
	attrs.add(sortedKeys(it.KeyConditions)...)
	for _, e := range []struct{ name, expr string }{
		{"ProjectionExpression", it.ProjectionExpression}, {"UpdateExpression", it.UpdateExpression},
		{"ConditionExpression", it.ConditionExpression}, {"FilterExpression", it.FilterExpression},
		{"KeyConditionExpression", it.KeyConditionExpression},
	} {
		if err := attrs.expr(e.name, e.expr, it.ExpressionAttributeNames); err != nil {
			return ck, err
		}
	}
	attrs.into(ck.context)

	var leading []string
	switch op {
	case "Query":
		pk := s.partitionOf(index)
		if v, ok := equalityValue(it.KeyConditionExpression, pk, it.ExpressionAttributeNames, it.ExpressionAttributeValues); ok {
			leading = []string{v}
		} else if kc, ok := it.KeyConditions[pk]; ok && kc.ComparisonOperator == "EQ" && len(kc.AttributeValueList) == 1 {
			if v, ok := attrString(kc.AttributeValueList[0]); ok {
				leading = []string{v}
			}
		}
	case "Scan":
		// A scan names no partition: IAM sees no LeadingKeys, which is why
		// DynamoDB's guide leaves Scan out of item-level policies.
	default:
		leading = appendLeading(appendLeading(nil, s, it.Key), s, it.Item)
	}
	if len(leading) > 0 {
		ck.context["dynamodb:LeadingKeys"] = leading
	}

	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		// "The ReturnValues parameter always has a value (NONE unless
		// otherwise specified)", so a StringEquals on it holds by default.
		if rv := it.ReturnValues; rv != "" {
			ck.context["dynamodb:ReturnValues"] = []string{rv}
		} else if topLevel {
			ck.context["dynamodb:ReturnValues"] = []string{"NONE"}
		}
	case "Query", "Scan":
		// Select has a value too: the API's default, which depends on the
		// projection and on whether an index is read.
		sel := it.Select
		switch {
		case sel != "":
		case it.ProjectionExpression != "" || len(it.AttributesToGet) > 0:
			sel = "SPECIFIC_ATTRIBUTES"
		case index != "":
			sel = "ALL_PROJECTED_ATTRIBUTES"
		default:
			sel = "ALL_ATTRIBUTES"
		}
		ck.context["dynamodb:Select"] = []string{sel}
	}
	return ck, nil
}

// action names the call's action from X-Amz-Target.
func (d *dynamo) action(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	return "dynamodb:" + t[strings.IndexByte(t, '.')+1:]
}

func (d *dynamo) tableARN(table string) string {
	return "arn:aws:dynamodb:" + d.c.cfg.Region + ":" + d.c.cfg.Account + ":table/" + table
}

// partitionOf is the partition key of the table ("") or of an index.
func (s *keySchema) partitionOf(index string) string {
	if s == nil {
		return ""
	}
	if index != "" {
		return s.indexes[index]
	}
	return s.partition
}

// appendLeading adds the table's partition key value in one key or item.
func appendLeading(out []string, s *keySchema, item map[string]json.RawMessage) []string {
	pk := s.partitionOf("")
	if pk == "" || item == nil {
		return out
	}
	if v, ok := attrString(item[pk]); ok && !slices.Contains(out, v) {
		out = append(out, v)
	}
	return out
}

// schema returns a table's key schema, asking dynalite once per table. A
// table that does not exist has none: the call is then evaluated without
// LeadingKeys and dynalite answers ResourceNotFoundException.
func (d *dynamo) schema(ctx context.Context, table string) (*keySchema, error) {
	d.mu.Lock()
	s, ok := d.schemas[table]
	d.mu.Unlock()
	if ok {
		return s, nil
	}
	body, _ := json.Marshal(map[string]string{"TableName": table})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.DescribeTable")
	// dynalite checks that a call is signed, not by whom.
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "awscheck", SecretAccessKey: "awscheck"}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", d.c.cfg.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	if resp.StatusCode == http.StatusBadRequest && bytes.Contains(raw, []byte("ResourceNotFoundException")) {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("describe table %s: %s: %s", table, resp.Status, raw)
	}
	type keyElem struct{ AttributeName, KeyType string }
	type index struct {
		IndexName string
		KeySchema []keyElem
	}
	var out struct {
		Table struct {
			KeySchema              []keyElem
			GlobalSecondaryIndexes []index
			LocalSecondaryIndexes  []index
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	hash := func(ks []keyElem) string {
		for _, k := range ks {
			if k.KeyType == "HASH" {
				return k.AttributeName
			}
		}
		return ""
	}
	s = &keySchema{partition: hash(out.Table.KeySchema), indexes: map[string]string{}}
	if s.partition == "" {
		return nil, errors.New("describe table " + table + ": no HASH key in " + string(raw))
	}
	for _, ix := range append(out.Table.GlobalSecondaryIndexes, out.Table.LocalSecondaryIndexes...) {
		s.indexes[ix.IndexName] = hash(ix.KeySchema)
	}
	d.mu.Lock()
	d.schemas[table] = s
	d.mu.Unlock()
	return s, nil
}

func (d *dynamo) refuse(w http.ResponseWriter, e *authError) {
	writeJSON10Error(w, http.StatusBadRequest, e.code+"Exception", "message", e.msg)
}

func (d *dynamo) deny(w http.ResponseWriter, c check, principal string, dec iampolicy.Decision) {
	writeJSON10Error(w, http.StatusBadRequest, "AccessDeniedException", "Message",
		fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", principal, c.action, c.resource, dec.Reason))
}

func (d *dynamo) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	d.proxy.ServeHTTP(w, r)
}

func (d *dynamo) fail(w http.ResponseWriter, e *apiError) {
	writeJSON10Error(w, e.status, e.code, "message", e.msg)
}

// names collects dynamodb:Attributes, without duplicates.
type names struct{ list []string }

func newNames() *names { return &names{} }

func (n *names) add(vs ...string) {
	for _, v := range vs {
		if !slices.Contains(n.list, v) {
			n.list = append(n.list, v)
		}
	}
}

func (n *names) addKeys(m map[string]json.RawMessage) {
	n.add(sortedKeys(m)...)
}

// expr adds the top-level names an expression reads or writes; an
// expression DynamoDB would refuse is refused here, as it is before any
// authorization.
func (n *names) expr(field, expr string, placeholders map[string]string) error {
	if expr == "" {
		return nil
	}
	got, err := topLevelNames(expr, placeholders)
	if err != nil {
		return &apiError{http.StatusBadRequest, "ValidationException", "Invalid " + field + ": " + err.Error()}
	}
	n.add(got...)
	return nil
}

func (n *names) into(ctx map[string][]string) {
	if len(n.list) > 0 {
		ctx["dynamodb:Attributes"] = n.list
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
