package indexer

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// DefaultPollEvery is the pause between two scans of a Poller.
const DefaultPollEvery = 2 * time.Second

// Item is an item's primary key.
type Item struct{ PK, SK string }

// Poller feeds an Indexer from a table without a stream: each Poll scans the
// table for a digest of every item the index is made from, compares it with
// the previous scan, and hands the Indexer one record per item written,
// changed or deleted in between, as a stream would deliver them. The local
// server's embedded index follows a DynamoDB table so.
//
// A written or changed item becomes a MODIFY record without images, which
// the Indexer takes as "look at it again" (a workspace's record re-indexes
// its documents, since its digest is its plan); a deleted one a REMOVE. What
// differs from a stream: several writes to one item between two scans make
// one record, which the Indexer, re-reading the table, cannot tell apart.
// The records of a failed batch keep the earlier digest of their item, so
// the next Poll hands them over again.
type Poller struct {
	Indexer *Indexer
	// Scan returns the digest of every item the index is made from.
	Scan func(ctx context.Context) (map[Item]string, error)
	// Every is the pause between two polls of Run (DefaultPollEvery when 0).
	Every time.Duration
	// Logger gets a line per poll that changed something and per failure
	// (slog.Default when nil).
	Logger *slog.Logger

	last map[Item]string
	seq  int64
}

func (p *Poller) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// Baseline records the table as the index holds it: the items the next Poll
// compares with. Take it before reading the table to build the index, so that
// nothing written in between is missed (it is indexed twice, harmlessly).
func (p *Poller) Baseline(ctx context.Context) error {
	d, err := p.Scan(ctx)
	if err != nil {
		return err
	}
	p.last = d
	return nil
}

// Poll scans the table once and indexes what changed since the last scan. It
// returns how many items changed and how many of those failed (they are
// tried again by the next Poll). A failed scan changes nothing.
func (p *Poller) Poll(ctx context.Context) (changed, failed int, err error) {
	now, err := p.Scan(ctx)
	if err != nil {
		return 0, 0, err
	}
	var recs []events.DynamoDBEventRecord
	var items []Item
	add := func(name string, it Item) {
		p.seq++
		recs = append(recs, events.DynamoDBEventRecord{EventName: name, EventID: strconv.FormatInt(p.seq, 10),
			Change: events.DynamoDBStreamRecord{SequenceNumber: strconv.FormatInt(p.seq, 10),
				Keys: map[string]events.DynamoDBAttributeValue{attrPK: events.NewStringAttribute(it.PK), attrSK: events.NewStringAttribute(it.SK)}}})
		items = append(items, it)
	}
	byKey := func(a, b Item) int {
		if c := strings.Compare(a.PK, b.PK); c != 0 {
			return c
		}
		return strings.Compare(a.SK, b.SK)
	}
	for _, it := range slices.SortedFunc(maps.Keys(now), byKey) {
		if old, ok := p.last[it]; !ok || old != now[it] {
			add(string(events.DynamoDBOperationTypeModify), it)
		}
	}
	for _, it := range slices.SortedFunc(maps.Keys(p.last), byKey) {
		if _, ok := now[it]; !ok {
			add(string(events.DynamoDBOperationTypeRemove), it)
		}
	}
	if len(recs) == 0 {
		p.last = now
		return 0, 0, nil
	}
	start := time.Now()
	resp, err := p.Indexer.Handle(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil { // every record has a sequence number: not expected
		return len(recs), len(recs), err
	}
	bySeq := make(map[string]Item, len(recs))
	for i, r := range recs {
		bySeq[r.Change.SequenceNumber] = items[i]
	}
	for _, f := range resp.BatchItemFailures {
		it := bySeq[f.ItemIdentifier]
		if old, ok := p.last[it]; ok {
			now[it] = old // differs from the table's: the next Poll looks again
		} else {
			delete(now, it)
		}
	}
	p.last = now
	p.logger().Info("search index: followed the table's changes", "items", len(recs),
		"failed", len(resp.BatchItemFailures), "took", time.Since(start).Round(time.Millisecond))
	return len(recs), len(resp.BatchItemFailures), nil
}

// Run polls, Every after the end of the previous poll, until ctx ends. A
// failed poll is logged and the next one tries again.
func (p *Poller) Run(ctx context.Context) {
	every := p.Every
	if every <= 0 {
		every = DefaultPollEvery
	}
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, failed, err := p.Poll(ctx); err != nil && ctx.Err() == nil {
			p.logger().Error("search index: cannot read the table's changes; searches answer from the last good index until a scan succeeds", "error", err)
		} else if failed > 0 {
			p.logger().Warn("search index: some changes could not be indexed; searches answer from the last good index and the next poll tries again", "failed", failed)
		}
		t.Reset(every)
	}
}
