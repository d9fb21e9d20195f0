package dynamo

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
)

// Leftovers are what earlier imports wrote for the file's workspaces and the
// file no longer contains: what --prune deletes, and what an import without
// it keeps (a removed key among them keeps working). IDs only, never a
// secret or a key's hash.
type Leftovers struct {
	Keys, Devices, Libraries, Slugs, Documents, Recordings []string
	Edges                                                  int
	// Items counts every item, the stored copies and graph chunks included.
	Items int
}

// Empty reports whether there is nothing left over.
func (l *Leftovers) Empty() bool { return l == nil || l.Items == 0 }

// leftovers lists the items of the file's workspaces (the byWorkspace index)
// that the file does not write. It runs before the import writes, so the
// index's lag can only hide an item an earlier import wrote a moment ago.
func (t *Table) leftovers(ctx context.Context, d *doclib.DataSet, graphs map[string][]item, gen string) (*Leftovers, error) {
	written := map[[2]string]bool{}
	err := emitItems(d, graphs, gen, func(it item, _ string) error {
		written[[2]string{it[attrPK].(*types.AttributeValueMemberS).Value, it[attrSK].(*types.AttributeValueMemberS).Value}] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	l := &Leftovers{}
	recordings := map[string]bool{}
	for _, w := range d.Workspaces {
		in := &dynamodb.QueryInput{IndexName: aws.String(IndexWorkspace),
			KeyConditionExpression: aws.String("ws = :ws"), ExpressionAttributeValues: item{":ws": str(w.ID)}}
		err := t.query(ctx, "list "+w.ID+" for leftovers", in, func(it item) bool {
			pk := it[attrPK].(*types.AttributeValueMemberS).Value
			sk := it[attrSK].(*types.AttributeValueMemberS).Value
			if written[[2]string{pk, sk}] {
				return true
			}
			l.Items++
			switch {
			case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "KEY#"):
				l.Keys = append(l.Keys, strings.TrimPrefix(sk, "KEY#"))
			case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "DEV#"):
				l.Devices = append(l.Devices, strings.TrimPrefix(sk, "DEV#"))
			case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "LIB#"):
				l.Libraries = append(l.Libraries, strings.TrimPrefix(sk, "LIB#"))
			case strings.HasPrefix(pk, "WS#") && strings.HasPrefix(sk, "SLUG#"):
				l.Slugs = append(l.Slugs, strings.TrimPrefix(sk, "SLUG#"))
			case strings.HasPrefix(pk, "DOC#") && sk == skDocument:
				l.Documents = append(l.Documents, strings.TrimPrefix(pk, "DOC#"))
			case strings.HasPrefix(pk, "DOC#") && strings.HasPrefix(sk, "O#"):
				l.Edges++
			case strings.HasPrefix(pk, "DOC#") && strings.HasPrefix(sk, "R#"):
				recordings[strings.TrimPrefix(sk, "R#")] = true
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	for id := range recordings {
		l.Recordings = append(l.Recordings, id)
	}
	for _, ids := range [][]string{l.Keys, l.Devices, l.Libraries, l.Slugs, l.Documents, l.Recordings} {
		slices.Sort(ids)
	}
	return l, nil
}
