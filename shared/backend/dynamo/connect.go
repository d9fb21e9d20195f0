package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Connect builds the client of a table from the standard AWS configuration
// (AWS_REGION, credentials, and AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB
// such as dynalite), with the SDK's standard retries: 5 attempts, exponential
// backoff with jitter on throttling and 5xx. Build it once per process.
func Connect(ctx context.Context, table string) (*Table, error) {
	if table == "" {
		return nil, errors.New("no table name: give --table NAME")
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryMaxAttempts(5))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION (for a local DynamoDB any value does, e.g. us-east-1)")
	}
	return &Table{Client: dynamodb.NewFromConfig(cfg), Name: table}, nil
}

// Check reports whether the table exists, with a message that says what to do
// when it does not.
func (t *Table) Check(ctx context.Context) error {
	cctx, cancel := t.call(ctx)
	defer cancel()
	_, err := t.Client.DescribeTable(cctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)})
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing):
		return fmt.Errorf("table %s: %w", t.Name, ErrTableMissing)
	case err != nil:
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	return nil
}

// StreamARN is the ARN of the table's stream, or "" when it has none (a
// local table made by CreateTable has none; the CDK stack's table has one,
// feeding the indexer).
func (t *Table) StreamARN(ctx context.Context) (string, error) {
	cctx, cancel := t.call(ctx)
	defer cancel()
	out, err := t.Client.DescribeTable(cctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)})
	if err != nil {
		return "", fmt.Errorf("table %s: %w", t.Name, err)
	}
	s := out.Table.StreamSpecification
	if s == nil || !aws.ToBool(s.StreamEnabled) {
		return "", nil
	}
	return aws.ToString(out.Table.LatestStreamArn), nil
}
