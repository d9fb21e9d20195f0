package trigger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/doclib/doclib/internal/standin/fakelambda"
	"github.com/doclib/doclib/shared/aws/trigger"
)

const stream = "arn:aws:dynamodb:eu-west-1:123456789012:table/doclib/stream/2026-11-01T00:00:00.000"

func newFake(t *testing.T, mappings ...fakelambda.Mapping) (*fakelambda.Server, *lambda.Client) {
	if mappings == nil {
		mappings = []fakelambda.Mapping{
			{UUID: "u-indexer", State: "Enabled", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:indexer", EventSourceArn: stream},
			{UUID: "u-other-table", State: "Enabled", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:other", EventSourceArn: stream + "x"},
			{UUID: "u-off", State: "Disabled", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:audit", EventSourceArn: stream},
			{UUID: "u-second", State: "Enabled", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:mirror", EventSourceArn: stream},
		}
	}
	f := fakelambda.Start(t, mappings...)
	c := lambda.New(lambda.Options{Region: "eu-west-1", BaseEndpoint: aws.String(f.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	return f, c
}

func TestPauseThenResume(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	paused, err := trigger.Pause(ctx, c, stream, trigger.Options{Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(paused) != 2 || paused[0].UUID != "u-indexer" || paused[1].UUID != "u-second" {
		t.Fatalf("paused %v, want the two enabled triggers of the stream", paused)
	}
	// Pause returns only once nothing runs: both are Disabled, not Disabling.
	for _, id := range []string{"u-indexer", "u-second"} {
		if s := f.State(id); s != "Disabled" {
			t.Errorf("%s is %s after Pause", id, s)
		}
	}
	if s := f.State("u-other-table"); s != "Enabled" {
		t.Errorf("another stream's trigger was touched: %s", s)
	}
	if err := trigger.Resume(ctx, c, paused); err != nil {
		t.Fatal(err)
	}
	if s := f.State("u-off"); s != "Disabled" {
		t.Errorf("a trigger that was off was turned on: %s", s)
	}
	want := []string{"u-indexer=disabled", "u-second=disabled", "u-indexer=enabled", "u-second=enabled"}
	if strings.Join(f.Puts(), " ") != strings.Join(want, " ") {
		t.Errorf("updates %v, want %v", f.Puts(), want)
	}
}

func TestPauseThatFailsResumesWhatItPaused(t *testing.T) {
	f, c := newFake(t)
	f.SetFailPut("u-second")
	_, err := trigger.Pause(context.Background(), c, stream, trigger.Options{Poll: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "disable trigger u-second") {
		t.Fatalf("error %v", err)
	}
	// The first was disabled, then enabled again: the indexer keeps running.
	want := []string{"u-indexer=disabled", "u-second=disabled", "u-indexer=enabled"}
	if strings.Join(f.Puts(), " ") != strings.Join(want, " ") {
		t.Errorf("updates %v, want %v", f.Puts(), want)
	}
}

func TestPauseGivesUpOnATriggerThatStaysBusy(t *testing.T) {
	f, c := newFake(t, fakelambda.Mapping{UUID: "u-indexer", State: "Enabled", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:indexer", EventSourceArn: stream})
	// Never Disabled: the fake needs two looks, and the timeout allows none.
	_, err := trigger.Pause(context.Background(), c, stream, trigger.Options{Poll: 5 * time.Millisecond, Timeout: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "still Disabling") {
		t.Fatalf("error %v", err)
	}
	if puts := f.Puts(); puts[len(puts)-1] != "u-indexer=enabled" {
		t.Errorf("updates %v, want the trigger enabled again last", puts)
	}
}

func TestNoTriggers(t *testing.T) {
	_, c := newFake(t)
	paused, err := trigger.Pause(context.Background(), c, "arn:aws:dynamodb:eu-west-1:123456789012:table/none/stream/x", trigger.Options{})
	if err != nil || len(paused) != 0 {
		t.Errorf("%v %v", paused, err)
	}
}
