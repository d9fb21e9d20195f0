package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
)

// Scan calls each with every item of the table, from segments parallel scans
// (each calls each from its own goroutine, one at a time per segment).
func (t *Table) Scan(ctx context.Context, segments int, each func(item) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	for seg := range segments {
		g.Go(func() error {
			in := &dynamodb.ScanInput{TableName: aws.String(t.Name), Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments))}
			for {
				cctx, cancel := context.WithTimeout(gctx, 30*t.timeout())
				res, err := t.Client.Scan(cctx, in)
				cancel()
				if err != nil {
					return fmt.Errorf("dynamo: scan %s: %w", t.Name, err)
				}
				mu.Lock()
				for _, it := range res.Items {
					if err := each(it); err != nil {
						mu.Unlock()
						return err
					}
				}
				mu.Unlock()
				if res.LastEvaluatedKey == nil {
					return nil
				}
				in.ExclusiveStartKey = res.LastEvaluatedKey
			}
		})
	}
	return g.Wait()
}

// Export reads the table back into a data set: workspaces (with their credit),
// devices, libraries, documents, edges and recordings, each ordered by ID. The
// local server on DynamoDB builds its search index from it. Keys are not
// exported: only their hashes are stored.
func (t *Table) Export(ctx context.Context) (*doclib.DataSet, error) {
	d := &doclib.DataSet{}
	credit := map[string]int64{}
	recs := map[string]*doclib.Recording{}
	err := t.Scan(ctx, 4, func(it item) error {
		pk := it[attrPK].(*types.AttributeValueMemberS).Value
		sk := it[attrSK].(*types.AttributeValueMemberS).Value
		var err error
		switch {
		case strings.HasPrefix(pk, "WS#") && sk == skWorkspace:
			var w workspaceItem
			if err = attributevalue.UnmarshalMap(it, &w); err == nil {
				d.Workspaces = append(d.Workspaces, w.domain(0))
			}
		case strings.HasPrefix(pk, "WS#") && sk == skCredit:
			var c creditItem
			if err = attributevalue.UnmarshalMap(it, &c); err == nil {
				credit[strings.TrimPrefix(pk, "WS#")] = c.Credit
			}
		case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "DEV#"):
			var dv deviceItem
			if err = attributevalue.UnmarshalMap(it, &dv); err == nil {
				d.Devices = append(d.Devices, &doclib.Device{ID: dv.ID, WorkspaceID: strings.TrimPrefix(pk, "WS#"), Status: dv.Status})
			}
		case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "LIB#"):
			var l libraryItem
			if err = attributevalue.UnmarshalMap(it, &l); err == nil {
				var lib *doclib.Library
				if lib, err = l.domain(); err == nil {
					d.Libraries = append(d.Libraries, lib)
				}
			}
		case strings.HasPrefix(pk, "DOC#") && sk == skDocument:
			var di documentItem
			if err = attributevalue.UnmarshalMap(it, &di); err == nil {
				d.Documents = append(d.Documents, di.domain())
			}
		case strings.HasPrefix(pk, "DOC#") && strings.HasPrefix(sk, "O#"):
			var e edgeItem
			if err = attributevalue.UnmarshalMap(it, &e); err == nil {
				d.Edges = append(d.Edges, e.domain())
			}
		case strings.HasPrefix(pk, "DOC#") && strings.HasPrefix(sk, "R#"):
			var r recordingItem
			if err = attributevalue.UnmarshalMap(it, &r); err == nil && recs[r.ID] == nil {
				var rec *doclib.Recording
				if rec, err = r.domain(); err == nil {
					recs[r.ID] = rec
				}
			}
		}
		if err != nil {
			return fmt.Errorf("dynamo: export %s %s: %w", pk, sk, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, w := range d.Workspaces {
		w.AICredit = credit[w.ID]
	}
	for _, r := range recs {
		d.Recordings = append(d.Recordings, r)
	}
	slices.SortFunc(d.Workspaces, func(a, b *doclib.Workspace) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Devices, func(a, b *doclib.Device) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Libraries, func(a, b *doclib.Library) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Documents, func(a, b *doclib.Document) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Edges, doclib.CompareEdges)
	slices.SortFunc(d.Recordings, func(a, b *doclib.Recording) int { return strings.Compare(a.ID, b.ID) })
	return d, nil
}
