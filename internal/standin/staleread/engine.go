package staleread

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// item is an item or a key in DynamoDB's JSON: attribute name → value.
type item = map[string]json.RawMessage

// schema is what the proxy needs of a table: its key and its indexes'.
type schema struct {
	keys    []string // the partition key, then the sort key if any
	indexes map[string]*index
}

// index is a secondary index: its key and what it projects.
type index struct {
	keys       []string
	projection string // ALL, KEYS_ONLY or INCLUDE
	include    []string
}

// call makes one request of the proxy's own to the engine, signed with
// credentials of its own (dynalite checks that a call is signed, not by
// whom), and decodes a 200 answer into out.
func (p *Proxy) call(ctx context.Context, op string, in, out any) (status int, raw []byte, err error) {
	body, err := json.Marshal(in)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	req.Header.Set("Accept-Encoding", "identity")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "staleread", SecretAccessKey: "staleread"}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", p.opts.Region, time.Now()); err != nil {
		return 0, nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, raw, fmt.Errorf("%s: %w", op, err)
		}
	}
	return resp.StatusCode, raw, nil
}

// schemaOf returns a table's schema, asking the engine once per table; nil
// when the table does not exist (the engine then refuses the call itself).
func (p *Proxy) schemaOf(ctx context.Context, table string) (*schema, error) {
	p.mu.Lock()
	s, ok := p.schemas[table]
	p.mu.Unlock()
	if ok {
		return s, nil
	}
	type keyElem struct{ AttributeName, KeyType string }
	type ix struct {
		IndexName  string
		KeySchema  []keyElem
		Projection struct {
			ProjectionType   string
			NonKeyAttributes []string
		}
	}
	var out struct {
		Table struct {
			KeySchema              []keyElem
			GlobalSecondaryIndexes []ix
			LocalSecondaryIndexes  []ix
		}
	}
	status, raw, err := p.call(ctx, "DescribeTable", map[string]string{"TableName": table}, &out)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	if status == http.StatusBadRequest && bytes.Contains(raw, []byte("ResourceNotFoundException")) {
		return nil, nil
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("describe table %s: %d %s", table, status, raw)
	}
	keys := func(ks []keyElem) []string {
		var hash, rng string
		for _, k := range ks {
			if k.KeyType == "HASH" {
				hash = k.AttributeName
			} else {
				rng = k.AttributeName
			}
		}
		if rng == "" {
			return []string{hash}
		}
		return []string{hash, rng}
	}
	s = &schema{keys: keys(out.Table.KeySchema), indexes: map[string]*index{}}
	for _, x := range append(out.Table.GlobalSecondaryIndexes, out.Table.LocalSecondaryIndexes...) {
		s.indexes[x.IndexName] = &index{keys: keys(x.KeySchema), projection: x.Projection.ProjectionType, include: x.Projection.NonKeyAttributes}
	}
	p.mu.Lock()
	p.schemas[table] = s
	p.mu.Unlock()
	return s, nil
}

// keyOf is the canonical text of an item's (or a key's) primary key, and
// the key itself; false when an attribute of the key is missing.
func (s *schema) keyOf(it item) (string, item, bool) {
	var b strings.Builder
	k := item{}
	for _, name := range s.keys {
		v, ok := it[name]
		if !ok {
			return "", nil, false
		}
		var av map[string]string
		if err := json.Unmarshal(v, &av); err != nil || len(av) != 1 {
			return "", nil, false
		}
		for typ, val := range av {
			if typ == "N" {
				// 1, 1.0 and 1e0 are one number, and one key.
				if r, ok := new(big.Rat).SetString(val); ok {
					val = r.RatString()
				}
			}
			b.WriteString(typ + ":" + val + "\x00")
		}
		k[name] = v
	}
	return b.String(), k, true
}

// images reads the current image of each key of a table, strongly
// consistent; a key with no item maps to nil.
func (p *Proxy) images(ctx context.Context, table string, s *schema, keys map[string]item) (map[string]item, error) {
	out := make(map[string]item, len(keys))
	var pending []item
	for _, k := range keys {
		pending = append(pending, k)
	}
	for len(pending) > 0 {
		n := min(len(pending), 100) // BatchGetItem's most keys per call
		chunk := pending[:n]
		pending = pending[n:]
		for len(chunk) > 0 {
			var res struct {
				Responses       map[string][]item
				UnprocessedKeys map[string]struct{ Keys []item }
			}
			status, raw, err := p.call(ctx, "BatchGetItem", map[string]any{"RequestItems": map[string]any{
				table: map[string]any{"Keys": chunk, "ConsistentRead": true}}}, &res)
			if err != nil {
				return nil, err
			}
			if status != http.StatusOK {
				return nil, fmt.Errorf("read images of %s: %d %s", table, status, raw)
			}
			for _, it := range res.Responses[table] {
				if k, _, ok := s.keyOf(it); ok {
					out[k] = it
				}
			}
			chunk = res.UnprocessedKeys[table].Keys
		}
	}
	for k := range keys {
		if _, ok := out[k]; !ok {
			out[k] = nil
		}
	}
	return out, nil
}
