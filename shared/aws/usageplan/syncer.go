package usageplan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/apigateway/types"
)

// description marks the API keys this package owns in the console.
const description = "doclib key usage identifier"

// Syncer registers API Gateway API keys and their usage plan memberships.
//
// Its keys are named KeyName(Plans.Customer, value) and tagged TagCustomer =
// Plans.Customer; a key without both is never found, changed or deleted, so
// that two stacks in one account keep out of each other's keys (and the IAM
// policy would refuse anyway). Keys from before that naming, named value and
// untagged, are adopted when they are in one of the stack's own usage plans
// (see adopt).
//
// API Gateway's control plane is rate-limited (TooManyRequestsException); the
// Client's retryer deals with that: the SDK's standard one retries throttling
// with backoff, and a caller syncing many keys may want more MaxAttempts.
// A Syncer is safe for concurrent use.
type Syncer struct {
	Client *apigateway.Client
	Plans  Plans
}

// Put makes sure an API key named KeyName(customer, value), valued value and
// tagged with the customer exists, is enabled, and is a key of exactly the
// usage plan of tier (and of no other plan in s.Plans).
//
// Every step looks before it writes, so a second Put changes nothing, and a Put
// finishes what an interrupted one left (key created but in no plan, disabled
// key, key still in its old tier's plan, adoption tagged but not renamed).
func (s *Syncer) Put(ctx context.Context, value, tier string) error {
	if err := checkValue(value); err != nil {
		return err
	}
	plan, ok := s.Plans.ByTier[tier]
	if !ok {
		known := strings.Join(s.Plans.tiers(), ", ")
		if known == "" {
			known = "none: " + plansHelp
		}
		return fmt.Errorf("usageplan: unknown tier %q for key %s (known tiers: %s)", tier, short(value), known)
	}
	keyID, err := s.ensureKey(ctx, value) // checks value and customer before any request
	if err != nil {
		return err
	}
	// Leave the other plans before joining: all tiers' plans serve the same API
	// stage, and API Gateway refuses a key in two plans of one stage. Between the
	// two the key is in no plan and its requests are refused for a moment; that
	// only happens when a workspace changes tier.
	seen := map[string]bool{plan: true}
	for _, t := range s.Plans.tiers() {
		if other := s.Plans.ByTier[t]; !seen[other] {
			seen[other] = true
			if err := s.leave(ctx, value, keyID, other); err != nil {
				return err
			}
		}
	}
	return s.join(ctx, value, keyID, plan)
}

// Delete removes this stack's API key valued value, and so its plan
// memberships. A key that does not exist is no error; another stack's key of
// the same value is left alone.
func (s *Syncer) Delete(ctx context.Context, value string) error {
	if err := checkValue(value); err != nil {
		return err
	}
	keys, err := s.findKeys(ctx, value)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		legacy, err := s.adopt(ctx, value)
		if err != nil || legacy == nil {
			return err
		}
		keys = append(keys, *legacy)
	}
	for _, k := range keys {
		_, err := s.Client.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: k.Id})
		if err != nil && !is[*types.NotFoundException](err) { // gone already: fine
			return s.fail("DeleteApiKey", value, "", err)
		}
	}
	return nil
}

// Values lists the usage identifiers of this stack's API keys: the keys named
// KeyName(customer, …) and tagged with the customer, read from their names
// (values are never asked for). doclib-admin keys sync deletes those that no
// doclib key has any more.
func (s *Syncer) Values(ctx context.Context) ([]string, error) {
	prefix := KeyName(s.Plans.Customer, "")
	keys, err := s.listKeys(ctx, "", prefix, func(k types.ApiKey) bool {
		return strings.HasPrefix(aws.ToString(k.Name), prefix) && k.Tags[TagCustomer] == s.Plans.Customer
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, strings.TrimPrefix(aws.ToString(k.Name), prefix))
	}
	slices.Sort(out)
	return out, nil
}

// ensureKey returns the ID of this stack's enabled API key valued value,
// adopting, creating or enabling it as needed.
func (s *Syncer) ensureKey(ctx context.Context, value string) (string, error) {
	key, err := s.findKey(ctx, value)
	if err != nil {
		return "", err
	}
	if key == nil {
		if key, err = s.adopt(ctx, value); err != nil {
			return "", err
		}
	}
	if key == nil {
		out, err := s.Client.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{
			Name:        aws.String(KeyName(s.Plans.Customer, value)),
			Value:       aws.String(value),
			Enabled:     true,
			Description: aws.String(description),
			Tags:        map[string]string{TagCustomer: s.Plans.Customer},
		})
		if err == nil {
			return aws.ToString(out.Id), nil
		}
		// A conflict means a key of this value exists: a concurrent Put's, or a
		// retried create whose first attempt landed. Use it if it is ours.
		if !is[*types.ConflictException](err) {
			return "", s.fail("CreateApiKey", value, "", err)
		}
		if key, err = s.findKey(ctx, value); err != nil {
			return "", err
		}
		if key == nil {
			// API key values are unique in an account and Region: this one
			// belongs to another stack (the same key imported into two) or
			// predates per-stack keys without being in this stack's plans.
			return "", s.fail("CreateApiKey", value, "", fmt.Errorf("an API key of this value exists but is not this stack's "+
				"(named %s and tagged %s=%s): another stack's (the same doclib key in two stacks), "+
				"or an untagged one in none of this stack's usage plans: %w",
				KeyName(s.Plans.Customer, short(value)), TagCustomer, s.Plans.Customer, err))
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

// findKey returns this stack's API key valued value, or nil if there is none.
// Two such keys need a person to decide which to keep: without reading their
// values (which this package never asks for) there is no telling which is
// doclib's.
func (s *Syncer) findKey(ctx context.Context, value string) (*types.ApiKey, error) {
	keys, err := s.findKeys(ctx, value)
	switch {
	case err != nil:
		return nil, err
	case len(keys) > 1:
		return nil, fmt.Errorf("usageplan: %d API keys are named %s and tagged %s=%s; delete all but doclib's",
			len(keys), KeyName(s.Plans.Customer, short(value)), TagCustomer, s.Plans.Customer)
	case len(keys) == 1:
		return &keys[0], nil
	}
	return nil, nil
}

// findKeys lists this stack's API keys for value: named exactly
// KeyName(customer, value) and tagged with the customer.
func (s *Syncer) findKeys(ctx context.Context, value string) ([]types.ApiKey, error) {
	name := KeyName(s.Plans.Customer, value)
	return s.listKeys(ctx, value, name, func(k types.ApiKey) bool {
		return aws.ToString(k.Name) == name && k.Tags[TagCustomer] == s.Plans.Customer
	})
}

// listKeys lists the API keys whose name starts with query and that keep
// says to keep. Values are never asked for.
func (s *Syncer) listKeys(ctx context.Context, value, query string, keep func(types.ApiKey) bool) ([]types.ApiKey, error) {
	// Every Put and Delete starts here, so this is where a bad value or a
	// missing customer is refused, before any request. Values lists every
	// key and has no value.
	if value != "" {
		if err := checkValue(value); err != nil {
			return nil, err
		}
	}
	if err := checkCustomer(s.Plans.Customer); err != nil {
		return nil, fmt.Errorf("usageplan: the Syncer's Plans name no valid customer (%v): %s", err, plansHelp)
	}
	pages := apigateway.NewGetApiKeysPaginator(s.Client, &apigateway.GetApiKeysInput{
		NameQuery:     aws.String(query), // a prefix match
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
			if keep(k) {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

// adopt takes over a key registered before keys were named and tagged per
// stack: named value itself and untagged (or tagged with this customer by an
// adoption that stopped before the rename), and in one of this stack's usage
// plans, which only this stack's Syncer joins keys to. It tags the key, then
// renames it, and returns it; nil when there is no such key. An untagged key
// in none of this stack's plans is not this stack's to take.
func (s *Syncer) adopt(ctx context.Context, value string) (*types.ApiKey, error) {
	legacy, err := s.listKeys(ctx, value, value, func(k types.ApiKey) bool {
		tag, tagged := k.Tags[TagCustomer]
		return aws.ToString(k.Name) == value && (!tagged || tag == s.Plans.Customer)
	})
	if err != nil || len(legacy) == 0 {
		return nil, err
	}
	var ours []types.ApiKey
	for _, k := range legacy {
		in, err := s.inAnyPlan(ctx, value, aws.ToString(k.Id))
		if err != nil {
			return nil, err
		}
		if in {
			ours = append(ours, k)
		}
	}
	switch len(ours) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("usageplan: %d untagged API keys named %s are in this stack's usage plans; delete all but doclib's", len(ours), short(value))
	}
	k := ours[0]
	if k.Tags[TagCustomer] != s.Plans.Customer {
		// Tag first: the IAM policy lets the indexer rename only keys tagged
		// with its customer.
		_, err := s.Client.TagResource(ctx, &apigateway.TagResourceInput{
			ResourceArn: aws.String(s.keyARN(aws.ToString(k.Id))),
			Tags:        map[string]string{TagCustomer: s.Plans.Customer},
		})
		if err != nil {
			return nil, s.fail("TagResource", value, "", err)
		}
		if k.Tags == nil {
			k.Tags = map[string]string{}
		}
		k.Tags[TagCustomer] = s.Plans.Customer
	}
	name := KeyName(s.Plans.Customer, value)
	_, err = s.Client.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{
		ApiKey: k.Id,
		PatchOperations: []types.PatchOperation{
			{Op: types.OpReplace, Path: aws.String("/name"), Value: aws.String(name)},
			{Op: types.OpReplace, Path: aws.String("/description"), Value: aws.String(description)},
		},
	})
	if err != nil {
		return nil, s.fail("UpdateApiKey", value, "", err)
	}
	k.Name = aws.String(name)
	return &k, nil
}

// inAnyPlan reports whether the key is in one of s.Plans' usage plans.
func (s *Syncer) inAnyPlan(ctx context.Context, value, keyID string) (bool, error) {
	seen := map[string]bool{}
	for _, t := range s.Plans.tiers() {
		plan := s.Plans.ByTier[t]
		if seen[plan] {
			continue
		}
		seen[plan] = true
		in, err := s.member(ctx, value, keyID, plan)
		if err != nil || in {
			return in, err
		}
	}
	return false, nil
}

// keyARN is the ARN of API key id in the client's Region, for TagResource.
func (s *Syncer) keyARN(id string) string {
	region := s.Client.Options().Region
	partition := "aws"
	switch {
	case strings.HasPrefix(region, "cn-"):
		partition = "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		partition = "aws-us-gov"
	}
	return "arn:" + partition + ":apigateway:" + region + "::/apikeys/" + id
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
