// Package trigger pauses and resumes the Lambda triggers that read a DynamoDB
// stream: what a reindex needs so that the stream indexer's writes are not
// lost.
//
// A reindex exports the table, builds a new index for minutes, then swaps
// the alias to it. Whatever the indexer writes through the alias meanwhile
// lands in the old index and is gone at the swap, and its stream records are
// already checkpointed: a recording made private during a reindex would be
// back in the new index. Paused, the trigger leaves the records in the
// stream (kept 24 hours); resumed after the swap, it applies them to the new
// index, each by re-reading the table, so the index converges.
package trigger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// API is the part of the Lambda client the package uses.
type API interface {
	ListEventSourceMappings(context.Context, *lambda.ListEventSourceMappingsInput, ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
	GetEventSourceMapping(context.Context, *lambda.GetEventSourceMappingInput, ...func(*lambda.Options)) (*lambda.GetEventSourceMappingOutput, error)
	UpdateEventSourceMapping(context.Context, *lambda.UpdateEventSourceMappingInput, ...func(*lambda.Options)) (*lambda.UpdateEventSourceMappingOutput, error)
}

// Mapping is a trigger that Pause disabled.
type Mapping struct {
	UUID     string
	Function string // the function's ARN
}

// Options of Pause; zero values take the defaults.
type Options struct {
	// Poll is the wait between two looks at a trigger that is disabling.
	Poll time.Duration // default 2 s
	// Timeout bounds the wait for every trigger to be disabled: a batch in
	// flight finishes first, and the indexer's timeout is 600 s.
	Timeout time.Duration // default 11 minutes
}

// Pause disables every enabled trigger reading streamARN and waits until none
// runs. It returns the triggers it disabled, for Resume. On failure it
// resumes those it had disabled and returns the error.
func Pause(ctx context.Context, api API, streamARN string, o Options) ([]Mapping, error) {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 11 * time.Minute
	}
	var enabled []Mapping
	var marker *string
	for {
		out, err := api.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String(streamARN), Marker: marker})
		if err != nil {
			return nil, fmt.Errorf("list the triggers of %s: %w", streamARN, err)
		}
		for _, m := range out.EventSourceMappings {
			switch aws.ToString(m.State) {
			case "Enabled", "Enabling", "Updating", "Creating":
				enabled = append(enabled, Mapping{UUID: aws.ToString(m.UUID), Function: aws.ToString(m.FunctionArn)})
			}
		}
		if aws.ToString(out.NextMarker) == "" {
			break
		}
		marker = out.NextMarker
	}
	var paused []Mapping
	fail := func(err error) ([]Mapping, error) {
		return nil, errors.Join(err, Resume(context.WithoutCancel(ctx), api, paused))
	}
	for _, m := range enabled {
		if _, err := api.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(m.UUID), Enabled: aws.Bool(false)}); err != nil {
			return fail(fmt.Errorf("disable trigger %s of %s: %w", m.UUID, m.Function, err))
		}
		paused = append(paused, m)
	}
	deadline := time.Now().Add(o.Timeout)
	for _, m := range paused {
		for {
			out, err := api.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(m.UUID)})
			if err != nil {
				return fail(fmt.Errorf("trigger %s of %s: %w", m.UUID, m.Function, err))
			}
			state := aws.ToString(out.State)
			if state == "Disabled" {
				break
			}
			if state != "Disabling" && state != "Updating" {
				return fail(fmt.Errorf("trigger %s of %s is %s, not disabling: another change is under way; run again when it is Enabled", m.UUID, m.Function, state))
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("trigger %s of %s is still %s after %s: a batch is running longer than the indexer's timeout", m.UUID, m.Function, state, o.Timeout))
			}
			t := time.NewTimer(o.Poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return fail(ctx.Err())
			case <-t.C:
			}
		}
	}
	return paused, nil
}

// Resume enables the triggers Pause disabled. It tries every one, whatever
// fails, and says which to enable by hand.
func Resume(ctx context.Context, api API, paused []Mapping) error {
	var errs []error
	for _, m := range paused {
		if _, err := api.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(m.UUID), Enabled: aws.Bool(true)}); err != nil {
			errs = append(errs, fmt.Errorf("enable trigger %s of %s again (by hand: aws lambda update-event-source-mapping --uuid %s --enabled): %w", m.UUID, m.Function, m.UUID, err))
		}
	}
	return errors.Join(errs...)
}
