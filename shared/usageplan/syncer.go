package usageplan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/apigateway/types"
)

// description marks the API keys this package owns in the console.
const description = "doclib key usage identifier"

// Syncer registers API Gateway API keys and their usage plan memberships.
//
// API Gateway's control plane is rate-limited (TooManyRequestsException); the
// Client's retryer deals with that: the SDK's standard one retries throttling
// with backoff, and a caller syncing many keys may want more MaxAttempts.
// A Syncer is safe for concurrent use.
type Syncer struct {
	Client *apigateway.Client
	Plans  Plans
}

// Put makes sure an API key named and valued value exists, is enabled, and is a
// key of exactly the usage plan of tier (and of no other plan in s.Plans).
//
// Every step looks before it writes, so a second Put changes nothing, and a Put
// finishes what an interrupted one left (key created but in no plan, disabled
// key, key still in its old tier's plan).
func (s *Syncer) Put(ctx context.Context, value, tier string) error {
	plan, ok := s.Plans[tier]
	if !ok {
		known := strings.Join(s.Plans.tiers(), ", ")
		if known == "" {
			known = "none: " + plansHelp
		}
		return fmt.Errorf("usageplan: unknown tier %q for key %s (known tiers: %s)", tier, short(value), known)
	}
	keyID, err := s.ensureKey(ctx, value) // checks value before any request
	if err != nil {
		return err
	}
	// Leave the other plans before joining: all tiers' plans serve the same API
	// stage, and API Gateway refuses a key in two plans of one stage. Between the
	// two the key is in no plan and its requests are refused for a moment; that
	// only happens when a workspace changes tier.
	seen := map[string]bool{plan: true}
	for _, t := range s.Plans.tiers() {
		if other := s.Plans[t]; !seen[other] {
			seen[other] = true
			if err := s.leave(ctx, value, keyID, other); err != nil {
				return err
			}
		}
	}
	return s.join(ctx, value, keyID, plan)
}

// Delete removes the API key named value, and so its plan memberships. A key
// that does not exist is no error.
func (s *Syncer) Delete(ctx context.Context, value string) error {
	keys, err := s.findKeys(ctx, value)
	if err != nil {
		return err
	}
	for _, k := range keys {
		_, err := s.Client.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: k.Id})
		if err != nil && !is[*types.NotFoundException](err) { // gone already: fine
			return s.fail("DeleteApiKey", value, "", err)
		}
	}
	return nil
}

// ensureKey returns the ID of the enabled API key named value, creating or
// enabling it as needed.
func (s *Syncer) ensureKey(ctx context.Context, value string) (string, error) {
	key, err := s.findKey(ctx, value)
	if err != nil {
		return "", err
	}
	if key == nil {
		out, err := s.Client.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{
			Name:        aws.String(value),
			Value:       aws.String(value),
			Enabled:     true,
			Description: aws.String(description),
		})
		if err == nil {
			return aws.ToString(out.Id), nil
		}
		// A conflict means the key appeared since we looked: a concurrent Put, or
		// a retried create whose first attempt landed. Use that key if it is ours.
		if !is[*types.ConflictException](err) {
			return "", s.fail("CreateApiKey", value, "", err)
		}
		if key, _ = s.findKey(ctx, value); key == nil {
			return "", s.fail("CreateApiKey", value, "", err)
		}
	}
	if !key.Enabled {
		_, err := s.Client.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{
			ApiKey: key.Id,
			PatchOperations: []types.PatchOperation{
				{Op: types.OpReplace, Path: aws.String("/enabled"), Value: aws.String("true")},
			},
		})
		if err != nil {
			return "", s.fail("UpdateApiKey", value, "", err)
		}
	}
	return aws.ToString(key.Id), nil
}

// findKey returns the API key named value, or nil if there is none. Two keys of
// that name need a person to decide which to keep: without reading their values
// (which this package never asks for) there is no telling which is doclib's.
func (s *Syncer) findKey(ctx context.Context, value string) (*types.ApiKey, error) {
	keys, err := s.findKeys(ctx, value)
	switch {
	case err != nil:
		return nil, err
	case len(keys) > 1:
		return nil, fmt.Errorf("usageplan: %d API keys are named %s; delete all but doclib's", len(keys), short(value))
	case len(keys) == 1:
		return &keys[0], nil
	}
	return nil, nil
}

// findKeys lists the API keys named exactly value. The name query is a prefix
// match, so others may come back too.
func (s *Syncer) findKeys(ctx context.Context, value string) ([]types.ApiKey, error) {
	// Every Put and Delete starts here, so this is where a bad value is refused.
	if err := checkValue(value); err != nil {
		return nil, err
	}
	pages := apigateway.NewGetApiKeysPaginator(s.Client, &apigateway.GetApiKeysInput{
		NameQuery:     aws.String(value),
		IncludeValues: aws.Bool(false),
		Limit:         aws.Int32(500), // API Gateway's largest page
	}, func(o *apigateway.GetApiKeysPaginatorOptions) { o.StopOnDuplicateToken = true })
	var keys []types.ApiKey
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.fail("GetApiKeys", value, "", err)
		}
		for _, k := range out.Items {
			if aws.ToString(k.Name) == value {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

// join adds the key to plan unless it is a member already.
func (s *Syncer) join(ctx context.Context, value, keyID, plan string) error {
	member, err := s.member(ctx, value, keyID, plan)
	if err != nil || member {
		return err
	}
	_, err = s.Client.CreateUsagePlanKey(ctx, &apigateway.CreateUsagePlanKeyInput{
		UsagePlanId: aws.String(plan),
		KeyId:       aws.String(keyID),
		KeyType:     aws.String("API_KEY"),
	})
	if err == nil {
		return nil
	}
	// A conflict is fine if the key joined meanwhile (a concurrent Put), but it
	// also means "in another plan of this stage", one outside s.Plans: look.
	if is[*types.ConflictException](err) {
		if member, merr := s.member(ctx, value, keyID, plan); merr == nil && member {
			return nil
		}
	}
	return s.fail("CreateUsagePlanKey", value, plan, err)
}

// leave removes the key from plan if it is a member.
func (s *Syncer) leave(ctx context.Context, value, keyID, plan string) error {
	member, err := s.member(ctx, value, keyID, plan)
	if err != nil || !member {
		return err
	}
	_, err = s.Client.DeleteUsagePlanKey(ctx, &apigateway.DeleteUsagePlanKeyInput{
		UsagePlanId: aws.String(plan),
		KeyId:       aws.String(keyID),
	})
	if err != nil && !is[*types.NotFoundException](err) { // left meanwhile: fine
		return s.fail("DeleteUsagePlanKey", value, plan, err)
	}
	return nil
}

// member reports whether the key is in plan. API Gateway answers
// NotFoundException for a key that is not.
func (s *Syncer) member(ctx context.Context, value, keyID, plan string) (bool, error) {
	_, err := s.Client.GetUsagePlanKey(ctx, &apigateway.GetUsagePlanKeyInput{
		UsagePlanId: aws.String(plan),
		KeyId:       aws.String(keyID),
	})
	switch {
	case err == nil:
		return true, nil
	case is[*types.NotFoundException](err):
		return false, nil
	}
	return false, s.fail("GetUsagePlanKey", value, plan, err)
}

func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// checkValue refuses what API Gateway would refuse as a key value (it needs at
// least 20 characters) or what could not be one of Value's, before any request.
func checkValue(value string) error {
	if len(value) < 20 || len(value) > 128 || !alnum(value) {
		return fmt.Errorf("usageplan: API key value %s has %d characters; want 20 to 128 letters and digits", short(value), len(value))
	}
	return nil
}

// short is the part of a value that errors show: enough to find the key, too
// little to use it as a usage identifier.
func short(value string) string {
	const n = 11 // "dlu" and 8 hex digits
	if len(value) <= n {
		return fmt.Sprintf("%q", value)
	}
	return value[:n] + "…"
}

// fail describes a failed API Gateway call by operation, key and plan.
func (s *Syncer) fail(op, value, plan string, err error) error {
	where := "key " + short(value)
	if plan != "" {
		where += " in " + s.Plans.name(plan)
	}
	return &syncError{msg: fmt.Sprintf("usageplan: %s for %s", op, where), value: value, err: err}
}

// syncError keeps the SDK's error for errors.As but scrubs the whole value from
// its text: a transport error quotes the request URL, and GetApiKeys carries the
// value in its query.
type syncError struct {
	msg, value string
	err        error
}

func (e *syncError) Error() string {
	text := e.err.Error()
	if e.value != "" {
		text = strings.ReplaceAll(text, e.value, short(e.value))
	}
	return e.msg + ": " + text
}

func (e *syncError) Unwrap() error { return e.err }
