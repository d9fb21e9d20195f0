package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin/lambdaemu"
)

// stream stands in for a table's DynamoDB stream and the Lambda event source
// mapping that feeds it to a function (AWS::Lambda::EventSourceMapping).
// dynalite has no streams, so the stream is derived: the table is scanned
// every pollEvery and compared with the previous scan, each difference
// becoming an INSERT, MODIFY or REMOVE record with the images the table's
// StreamViewType keeps. What differs from a real stream, on purpose: two
// writes to one item between two scans make one record (the indexer re-reads
// the table for every record, so it cannot tell), and there is one shard.
//
// The mapping's settings are the template's: FilterCriteria (records that no
// filter matches never reach the function), BatchSize,
// MaximumBatchingWindowInSeconds, FunctionResponseTypes
// ReportBatchItemFailures (retry from the first failed record),
// BisectBatchOnFunctionError, MaximumRetryAttempts, and the OnFailure
// destination, kept here as Failed.
type stream struct {
	client    *dynamodb.Client
	table     string
	arn       string // the stream's ARN, each record's eventSourceARN
	region    string
	viewType  string
	keys      []string // partition and sort key attribute names
	filters   []map[string]any
	batchSize int
	window    time.Duration
	retries   int
	bisect    bool
	partial   bool
	invoke    func(ctx context.Context, payload []byte) ([]byte, string, error)
	logf      func(string, ...any)

	mu      sync.Mutex
	last    map[string]map[string]types.AttributeValue // item key → item, at the last scan
	seq     int64
	pending []events.DynamoDBEventRecord
	scans   int64 // completed scans whose records were all handled
	failed  []events.DynamoDBEventRecord
	cond    *sync.Cond
}

const pollEvery = 200 * time.Millisecond

func (s *stream) run(ctx context.Context) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if err := s.poll(ctx); err != nil && ctx.Err() == nil {
			s.logf("stream: %v", err)
		}
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

// poll scans the table, turns the differences into records, and hands the
// records that pass the filters to the function in batches.
func (s *stream) poll(ctx context.Context) error {
	now := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(s.client, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("scan %s: %w", s.table, err)
		}
		for _, it := range out.Items {
			now[s.itemKey(it)] = it
		}
	}
	var recs []events.DynamoDBEventRecord
	keys := make([]string, 0, len(now))
	for k := range now {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		old, had := s.last[k]
		switch {
		case !had:
			recs = append(recs, s.record("INSERT", nil, now[k]))
		case !reflect.DeepEqual(attrJSON(old), attrJSON(now[k])):
			recs = append(recs, s.record("MODIFY", old, now[k]))
		}
	}
	var gone []string
	for k := range s.last {
		if _, ok := now[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	for _, k := range gone {
		recs = append(recs, s.record("REMOVE", s.last[k], nil))
	}
	s.last = now
	for _, r := range recs {
		if s.matches(r) {
			s.pending = append(s.pending, r)
		}
	}
	s.deliver(ctx)
	s.mu.Lock()
	s.scans++
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

// deliver sends the pending records in batches until none is left. The
// batching window is honoured by waiting for it before a batch smaller than
// BatchSize, as Lambda does; and a batch ends before its event would pass
// the 6 MB an invocation takes, as Lambda's poller ends one when "the
// payload reaches 6 MB" (Lambda developer guide, "How Lambda processes
// records from stream and queue-based event sources"): records of
// documents near their size limit are 700 KB with both images.
func (s *stream) deliver(ctx context.Context) {
	for len(s.pending) > 0 && ctx.Err() == nil {
		n := fitPayload(s.pending[:min(len(s.pending), s.batchSize)], lambdaemu.MaxRequestSize)
		batch := s.pending[:n]
		done := s.handle(ctx, batch, 0)
		s.pending = s.pending[done:]
	}
}

// handle invokes the function with batch and returns how many records of it
// are finished (processed, or given up and sent to the failure destination).
func (s *stream) handle(ctx context.Context, batch []events.DynamoDBEventRecord, attempt int) int {
	payload, _ := json.Marshal(events.DynamoDBEvent{Records: batch})
	out, fnErr, err := s.invoke(ctx, payload)
	if err != nil {
		fnErr = err.Error()
	}
	if fnErr == "" && s.partial {
		var resp events.DynamoDBEventResponse
		if len(out) > 0 && string(out) != "null" {
			if err := json.Unmarshal(out, &resp); err != nil {
				fnErr = "invalid partial batch response: " + err.Error()
			}
		}
		if fnErr == "" && len(resp.BatchItemFailures) > 0 {
			first := -1
			for i, r := range batch {
				for _, f := range resp.BatchItemFailures {
					if f.ItemIdentifier == r.Change.SequenceNumber && (first < 0 || i < first) {
						first = i
					}
				}
			}
			if first < 0 { // an identifier of no record: Lambda treats the whole batch as failed
				fnErr = "partial batch response names no record of the batch"
			} else {
				if attempt >= s.retries {
					s.giveUp(batch[first:], "retries exhausted")
					return len(batch)
				}
				s.logf("stream: %d of %d records failed, retrying from %s", len(batch)-first, len(batch), batch[first].Change.SequenceNumber)
				time.Sleep(backoff(attempt))
				return first + s.handle(ctx, batch[first:], attempt+1)
			}
		}
	}
	if fnErr == "" {
		return len(batch)
	}
	s.logf("stream: batch of %d failed: %s", len(batch), fnErr)
	if attempt >= s.retries {
		s.giveUp(batch, fnErr)
		return len(batch)
	}
	time.Sleep(backoff(attempt))
	if s.bisect && len(batch) > 1 {
		half := len(batch) / 2
		s.handle(ctx, batch[:half], attempt+1)
		s.handle(ctx, batch[half:], attempt+1)
		return len(batch)
	}
	return s.handle(ctx, batch, attempt+1)
}

func backoff(attempt int) time.Duration {
	return time.Duration(50*(1<<min(attempt, 5))) * time.Millisecond
}

func (s *stream) giveUp(recs []events.DynamoDBEventRecord, why string) {
	s.logf("stream: %d records sent to the failure destination: %s", len(recs), why)
	s.mu.Lock()
	s.failed = append(s.failed, recs...)
	s.mu.Unlock()
}

// Failed returns the records sent to the OnFailure destination.
func (s *stream) Failed() []events.DynamoDBEventRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failed)
}

// settle waits until every write made before the call has been scanned and
// its records handled.
func (s *stream) settle(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.scans + 2 // the scan under way may have started before the call
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	for s.scans < target {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream: not caught up: %w", err)
		}
		s.cond.Wait()
	}
	return nil
}

func (s *stream) itemKey(it map[string]types.AttributeValue) string {
	var b strings.Builder
	for _, k := range s.keys {
		j, _ := json.Marshal(attrJSON(map[string]types.AttributeValue{k: it[k]}))
		b.Write(j)
		b.WriteByte(0)
	}
	return b.String()
}

func (s *stream) record(name string, old, new map[string]types.AttributeValue) events.DynamoDBEventRecord {
	s.seq++
	img := new
	if img == nil {
		img = old
	}
	keys := map[string]types.AttributeValue{}
	for _, k := range s.keys {
		if v, ok := img[k]; ok {
			keys[k] = v
		}
	}
	ch := events.DynamoDBStreamRecord{
		ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
		Keys:                        toEvent(keys),
		SequenceNumber:              strconv.FormatInt(100000000000000000+s.seq, 10),
		StreamViewType:              s.viewType,
	}
	if s.viewType == "NEW_IMAGE" || s.viewType == "NEW_AND_OLD_IMAGES" {
		ch.NewImage = toEvent(new)
	}
	if s.viewType == "OLD_IMAGE" || s.viewType == "NEW_AND_OLD_IMAGES" {
		ch.OldImage = toEvent(old)
	}
	size, _ := json.Marshal(attrJSON(img))
	ch.SizeBytes = int64(len(size))
	return events.DynamoDBEventRecord{
		AWSRegion:      s.region,
		Change:         ch,
		EventID:        fmt.Sprintf("%032x", s.seq),
		EventName:      name,
		EventSource:    "aws:dynamodb",
		EventVersion:   "1.1",
		EventSourceArn: s.arn,
	}
}

// matches applies the mapping's filters to the record as Lambda does: the
// record, as JSON, must match at least one filter's pattern.
func (s *stream) matches(r events.DynamoDBEventRecord) bool {
	if len(s.filters) == 0 {
		return true
	}
	b, _ := json.Marshal(r)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	for _, f := range s.filters {
		if matchPattern(f, doc) {
			return true
		}
	}
	return false
}

// matchPattern is Lambda event filtering's pattern syntax, the part of it a
// template can use on a stream: nested objects, arrays of alternatives
// holding literals, {"prefix": …}, {"suffix": …}, {"anything-but": …},
// {"exists": …} and {"equals-ignore-case": …}. An operator it does not know
// matches nothing, so a filter the stand-in cannot read drops records
// visibly rather than passing them.
func matchPattern(pattern map[string]any, doc map[string]any) bool {
	for k, want := range pattern {
		got, present := doc[k]
		switch w := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !matchPattern(w, sub) {
				return false
			}
		case []any:
			if !matchAlternatives(w, got, present) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func matchAlternatives(alts []any, got any, present bool) bool {
	for _, a := range alts {
		switch op := a.(type) {
		case map[string]any:
			for name, arg := range op {
				switch name {
				case "exists":
					if b, _ := arg.(bool); b == present {
						return true
					}
				case "prefix":
					if s, ok := got.(string); ok && present && strings.HasPrefix(s, fmt.Sprint(arg)) {
						return true
					}
				case "suffix":
					if s, ok := got.(string); ok && present && strings.HasSuffix(s, fmt.Sprint(arg)) {
						return true
					}
				case "equals-ignore-case":
					if s, ok := got.(string); ok && present && strings.EqualFold(s, fmt.Sprint(arg)) {
						return true
					}
				case "anything-but":
					if !present {
						continue
					}
					list, ok := arg.([]any)
					if !ok {
						list = []any{arg}
					}
					if !slices.ContainsFunc(list, func(x any) bool { return reflect.DeepEqual(x, got) }) {
						return true
					}
				}
			}
		default:
			if present && reflect.DeepEqual(a, got) {
				return true
			}
		}
	}
	return false
}

// attrJSON is an item in DynamoDB's JSON form, to compare and to convert.
func attrJSON(item map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(item))
	for k, v := range item {
		out[k] = avJSON(v)
	}
	return out
}

func avJSON(v types.AttributeValue) any {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": x.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": x.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": x.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": x.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": x.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": x.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": x.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": x.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(x.Value))
		for i, e := range x.Value {
			l[i] = avJSON(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": attrJSON(x.Value)}
	}
	return nil
}

// toEvent converts an item to the stream event's attribute values through
// their common JSON form.
func toEvent(item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if item == nil {
		return nil
	}
	b, _ := json.Marshal(attrJSON(item))
	var out map[string]events.DynamoDBAttributeValue
	_ = json.Unmarshal(b, &out)
	return out
}

// fitPayload is how many of records, at least one, make an event of at most
// limit bytes.
func fitPayload(records []events.DynamoDBEventRecord, limit int) int {
	size := len(`{"Records":[]}`)
	for i, r := range records {
		b, _ := json.Marshal(r)
		size += len(b) + 1
		if size > limit && i > 0 {
			return i
		}
	}
	return len(records)
}
