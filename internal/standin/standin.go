// Package standin runs the stack that `go run ./infra` synthesizes, on this
// machine, from its template alone: the real function binaries (built as
// for deploy, for the host's architecture) under a Lambda Runtime API
// emulator, with the environment the template gives each; the REST API with
// its authorizer, usage plans, gateway responses and WAF rate rule; the
// table's stream feeding the indexer through the event source mapping's
// filters and batching; and every AWS call the functions make sent through a
// checker that signs each function in as its own role and evaluates the call
// against the template's IAM policies (the role's, and the domain's access
// policy for OpenSearch, the bucket's policy for S3), answering a denied
// call as AWS does. Behind the checker, DynamoDB is dynalite, OpenSearch the
// project's fake (which validates every request against OpenSearch's API
// description), S3 gofakes3 (package fakes3), Bedrock and API Gateway's
// control plane fakes of their wire formats. Between the checker (and the
// operator's client, Stack.DB) and dynalite, staleread makes eventually
// consistent reads miss the writes of the last second, as DynamoDB's may.
//
// What differs from AWS, on purpose, is listed in docs/standin.md: the
// functions reach AWS through AWS_ENDPOINT_URL (one HTTPS endpoint for every
// service, its CA in SSL_CERT_FILE), the stream is derived by scanning the
// table, and the data set is imported with the operator's rights straight
// into dynalite, as doclib-admin import does.
package standin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin/awscheck"
	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/internal/standin/fakeapigateway"
	"github.com/doclib/doclib/internal/standin/fakebedrock"
	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/standin/iampolicy"
	"github.com/doclib/doclib/internal/standin/lambdaemu"
	"github.com/doclib/doclib/internal/standin/restapi"
	"github.com/doclib/doclib/internal/standin/staleread"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
)

// Options configure a stand-in.
type Options struct {
	// Assembly is the synthesized stack to run (Synth).
	Assembly *Synthesized
	// DynamoDB is dynalite's endpoint, http://127.0.0.1:N.
	DynamoDB string
	// Data is imported into the table before the API serves; nil imports
	// nothing.
	Data *doclib.DataSet
	// Addr is where the API listens (127.0.0.1:0 when empty).
	Addr string
	// Logs receives the functions' and the stand-in's log lines (nil
	// discards them).
	Logs io.Writer
	// Run makes generated names unique (several stand-ins share a dynalite).
	Run string
	// AccountConcurrency is the account's Lambda concurrency quota in the
	// Region (0: lambdaemu.DefaultAccountConcurrency, 1,000). The template's
	// reservations are made against it as CloudFormation makes them, and
	// Start fails as the stack would when Lambda refuses one; the functions
	// without a reservation share what is left.
	AccountConcurrency int
	// Progress, when not nil, is told each step Start takes, in a line:
	// the table and the functions, the import, the indexing.
	Progress func(format string, args ...any)
	// StaleWindow is how long a write stays unseen by eventually consistent
	// reads (staleread.Options.Window; 1 s when 0).
	StaleWindow time.Duration
	// Gateway sets the REST API's clock and pacing: Now, Sleep, StreamBurst
	// and StreamRate (restapi.Options; zero values are AWS's). A test runs
	// the gateway's clock ahead as it paces a stream, so that an answer
	// that takes a minute of the gateway's time arrives in a moment. Its
	// IntegrationTimeout and Logf are not taken: the template's timeouts
	// and the stand-in's log apply.
	Gateway restapi.Options
	// S3Speed is how fast the buckets answer: nil is S3's speed as a
	// function in the Region sees it (fakes3.DefaultSpeed: a first byte,
	// a rate per connection and a share per function; docs/standin.md,
	// "S3's speed"), so that cold starts and swaps are not flattered by
	// loopback; &fakes3.Speed{} is loopback's.
	S3Speed *fakes3.Speed
	// FunctionEnv is added to every function's environment, over the
	// template's: a test's setting that the stack leaves to its default
	// (DOCLIB_SEARCH_RANGE_FROM_KB=0, so that the demo's small segments are
	// read by range as a large index's are).
	FunctionEnv map[string]string
}

// Stack is a running stand-in.
type Stack struct {
	// URL is the API's base URL, the stage included, without a trailing
	// slash: <URL>/libraries.
	URL      string
	Template *cfn.Template
	Values   cfn.Values
	Table    string
	Checker  *awscheck.Checker
	Search   *fakeopensearch.Cluster
	Bedrock  *fakebedrock.Server
	Gateway  *fakeapigateway.Fake
	// S3 holds the template's buckets (nil when it has none); tests may
	// read or change objects behind the API through S3.Backend.
	S3 *fakes3.Server
	// Buckets are the buckets' names by logical ID; Bucket is the name when
	// there is exactly one.
	Buckets   map[string]string
	Bucket    string
	Functions map[string]*lambdaemu.Pool // by function name (the template's FunctionName)
	// Account is the account's Lambda concurrency the functions share.
	Account *lambdaemu.AccountConcurrency
	// DB is a client of the table's DynamoDB with the operator's rights,
	// not through the checker but through Stale, as the functions' calls
	// are: a write by either is unseen by eventually consistent reads, its
	// own included, for Stale's window.
	DB *dynamodb.Client
	// Stale is the model of eventually consistent reads in front of
	// dynalite.
	Stale *staleread.Server

	engine *dynamodb.Client // dynalite itself: the table's creation, the import, the stream

	stream *stream
	run    string
	// gateway is the stage as it serves now, with the logical ID of the
	// deployment it serves (Update).
	gateway    atomic.Pointer[restapi.Gateway]
	deployment string
	updateMu   sync.Mutex
	server     *http.Server
	cancel     context.CancelFunc
	done       sync.WaitGroup
	logf       func(string, ...any)
}

// Start runs the stack of opts.Assembly and imports opts.Data; it returns
// once the stream has delivered the import to the indexer, so that search
// and keys work.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	logs := opts.Logs
	if logs == nil {
		logs = io.Discard
	}
	logger := log.New(logs, "standin: ", log.Lmsgprefix|log.Ltime)
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	st := &Stack{Functions: map[string]*lambdaemu.Pool{}, logf: logger.Printf, run: opts.Run,
		Account: &lambdaemu.AccountConcurrency{Concurrency: opts.AccountConcurrency}}
	s = st
	defer func() {
		if err != nil {
			st.Close() // s is nil by now: every failure returns nil, err
		}
	}()
	t, err := cfn.Load(opts.Assembly.Template)
	if err != nil {
		return nil, err
	}
	s.Template = t
	vals := physical(t, opts.Assembly.Stack, opts.Run, "")
	r := &cfn.Resolver{T: t, V: vals}

	// The services behind the checker.
	s.Search = fakeopensearch.New()
	s.Bedrock = fakebedrock.New()
	var planIDs []string
	for _, id := range t.OfType("AWS::ApiGateway::UsagePlan") {
		planIDs = append(planIDs, vals.Ref[id])
	}
	s.Gateway = fakeapigateway.New(planIDs...)

	domainARN, domainPolicy, err := domain(t, r)
	if err != nil {
		return nil, err
	}
	bs, bucketPolicies, err := buckets(t, r)
	if err != nil {
		return nil, err
	}
	// Every client's DynamoDB calls go through the model of eventually
	// consistent reads; the stream, which emulates DynamoDB Streams rather
	// than a client, reads dynalite itself.
	s.Stale, err = staleread.Start(opts.DynamoDB, staleread.Options{Window: opts.StaleWindow, Region: Region, Logf: logger.Printf})
	if err != nil {
		return nil, err
	}
	cfg := awscheck.Config{Account: Account, Region: Region, DynamoDB: s.Stale.URL,
		OpenSearch: s.Search, DomainARN: domainARN, DomainPolicy: domainPolicy, Bedrock: s.Bedrock,
		APIGateway: s.Gateway, ResourceTags: s.Gateway.Tags, Logf: logger.Printf}
	if len(bs) > 0 {
		if s.S3, err = startS3(bs); err != nil {
			return nil, err
		}
		speed := fakes3.DefaultSpeed
		if opts.S3Speed != nil {
			speed = *opts.S3Speed
		}
		s.S3.SetSpeed(speed)
		s.Buckets = map[string]string{}
		for _, b := range bs {
			s.Buckets[b.id] = b.name
		}
		if len(bs) == 1 {
			s.Bucket = bs[0].name
		}
		cfg.S3, cfg.BucketPolicies = s.S3, bucketPolicies
	}
	s.Checker, err = awscheck.Start(cfg)
	if err != nil {
		return nil, err
	}
	for _, id := range t.OfType("AWS::OpenSearchService::Domain") {
		vals.Attr[id+".DomainEndpoint"] = s.Checker.Host()
	}
	s.Values = vals

	// The table, created as the template declares it.
	operator := func(endpoint string) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{Region: Region, BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider("operator", "operator", "")})
	}
	s.engine, s.DB = operator(opts.DynamoDB), operator(s.Stale.URL)
	tableID, err := createTable(ctx, t, r, s.engine)
	if err != nil {
		return nil, err
	}
	s.Table = vals.Ref[tableID]
	progress("created table %s; starting %d functions under the Lambda emulator", s.Table, len(t.OfType("AWS::Lambda::Function")))

	roles, err := rolePolicies(t, r)
	if err != nil {
		return nil, err
	}
	if err := s.startFunctions(t, r, opts.Assembly, roles, opts.FunctionEnv, logs); err != nil {
		return nil, err
	}

	// The stream, from an empty table, then the import: every item reaches
	// the indexer as an INSERT, as a new stack's first import does.
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.stream, err = s.newStream(t, r, tableID, roles); err != nil {
		return nil, err
	}
	s.done.Add(1)
	go func() { defer s.done.Done(); s.stream.run(runCtx) }()
	if err := s.stream.settle(ctx); err != nil {
		return nil, err
	}
	if d := opts.Data; d != nil {
		progress("importing %d documents (%d libraries, %d workspaces, %d keys)", len(d.Documents), len(d.Libraries), len(d.Workspaces), len(d.APIKeys))
		// Straight into dynalite, unseen by the model: the stack serves data
		// imported before it, not a second ago.
		tbl := &dynamo.Table{Client: s.engine, Name: s.Table}
		if _, err := tbl.Import(ctx, d, "standin", dynamo.ImportOptions{}); err != nil {
			return nil, fmt.Errorf("standin: import: %w", err)
		}
		progress("indexing: the table's stream delivers the import to the indexer")
		if err := s.Settle(ctx); err != nil {
			return nil, err
		}
	}

	api, err := restAPI(t, r)
	if err != nil {
		return nil, err
	}
	perms, err := permissions(t, r)
	if err != nil {
		return nil, err
	}
	gwOpts := restapi.Options{Now: opts.Gateway.Now, Sleep: opts.Gateway.Sleep, StreamBurst: opts.Gateway.StreamBurst,
		StreamRate: opts.Gateway.StreamRate, Logf: logger.Printf}
	gw, err := restapi.New(api, &invoker{s: s, perms: perms}, gatewayKeys{s.Gateway}, gwOpts)
	if err != nil {
		return nil, err
	}
	s.gateway.Store(gw)
	if s.deployment, err = stageDeployment(t); err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("standin: listen: %w", err)
	}
	mux := http.NewServeMux()
	stage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.gateway.Load().ServeHTTP(w, r) })
	mux.Handle("/"+api.Stage+"/", http.StripPrefix("/"+api.Stage, stage))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// API Gateway's answer to a path outside every stage.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"message":"Forbidden"}`)
	})
	s.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.done.Add(1)
	go func() { defer s.done.Done(); _ = s.server.Serve(ln) }()
	s.URL = "http://" + ln.Addr().String() + "/" + api.Stage
	return s, nil
}

// Update applies a changed template of the same stack to the stage, as a
// CloudFormation stack update reaches it. The stage's own settings (its
// MethodSettings), the usage plans and the WAF rules take effect at once.
// The API's resources, methods, authorizers, gateway responses and
// API-wide settings reach the stage only through a new deployment, and
// CloudFormation creates one only when the AWS::ApiGateway::Deployment has
// another logical ID: a Deployment resource is never updated in place, so a
// change the CDK does not fold into the Deployment's logical ID is never
// served (the CDK folds an authorizer's settings in only with the feature
// flag @aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId). With a
// new deployment the authorizer cache is flushed. Nothing else of the
// template is applied: the functions, table and buckets stay as started.
func (s *Stack) Update(a *Synthesized) (newDeployment bool, err error) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	t, err := cfn.Load(a.Template)
	if err != nil {
		return false, err
	}
	if a.Stack != s.Values.StackName {
		return false, fmt.Errorf("standin: update: %s is another stack than %s", a.Stack, s.Values.StackName)
	}
	api, err := restAPI(t, &cfn.Resolver{T: t, V: physical(t, a.Stack, s.run, "")})
	if err != nil {
		return false, err
	}
	dep, err := stageDeployment(t)
	if err != nil {
		return false, err
	}
	cur := s.gateway.Load()
	newDeployment = dep != s.deployment
	if !newDeployment {
		kept := cur.API()
		kept.MethodSettings, kept.UsagePlans, kept.WAF = api.MethodSettings, api.UsagePlans, api.WAF
		api = kept
	}
	g, err := cur.Update(api)
	if err != nil {
		return false, err
	}
	if newDeployment {
		g.FlushAuthorizerCache()
		s.logf("update: the stage serves deployment %s (was %s)", dep, s.deployment)
	} else {
		s.logf("update: deployment %s unchanged: the stage keeps its resources, methods, authorizers and gateway responses", dep)
	}
	s.gateway.Store(g)
	s.deployment = dep
	return newDeployment, nil
}

// Deployed is the logical ID of the deployment the stage serves, and the
// API as the stage serves it.
func (s *Stack) Deployed() (string, restapi.API) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	return s.deployment, s.gateway.Load().API()
}

// stageDeployment is the logical ID of the deployment the template's stage
// names.
func stageDeployment(t *cfn.Template) (string, error) {
	stages := t.OfType("AWS::ApiGateway::Stage")
	if len(stages) != 1 {
		return "", fmt.Errorf("standin: %d stages, want 1", len(stages))
	}
	dep, _ := mapOf(t.Resources[stages[0]].Properties["DeploymentId"])["Ref"].(string)
	if r, ok := t.Resources[dep]; !ok || r.Type != "AWS::ApiGateway::Deployment" {
		return "", fmt.Errorf("standin: the stage deploys %q, not a deployment of the template", dep)
	}
	return dep, nil
}

// Settle waits until the table's writes so far have reached the indexer.
func (s *Stack) Settle(ctx context.Context) error { return s.stream.settle(ctx) }

// Failed returns the stream records the indexer gave up on (the mapping's
// on-failure destination).
func (s *Stack) Failed() int { return len(s.stream.Failed()) }

// Close stops everything the stand-in started.
func (s *Stack) Close() error {
	if s.server != nil {
		_ = s.server.Close()
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.done.Wait()
	var errs []error
	for _, p := range s.Functions {
		errs = append(errs, p.Close())
	}
	if s.Checker != nil {
		errs = append(errs, s.Checker.Close())
	}
	if s.Stale != nil {
		errs = append(errs, s.Stale.Close())
	}
	return errors.Join(errs...)
}

// gatewayKeys are the API keys of the control-plane fake, as the REST API
// looks them up.
type gatewayKeys struct{ f *fakeapigateway.Fake }

func (k gatewayKeys) LookupKey(value string) (restapi.Key, bool) {
	key, ok := k.f.KeyByValue(value)
	return restapi.Key{ID: key.ID, Enabled: key.Enabled, UsagePlans: key.UsagePlans}, ok
}

// domain returns the OpenSearch domain's ARN and access policy; none for a
// stack of the embedded tier, whose calls to OpenSearch are then refused.
func domain(t *cfn.Template, r *cfn.Resolver) (string, *iampolicy.Policy, error) {
	ids := t.OfType("AWS::OpenSearchService::Domain")
	switch {
	case len(ids) == 0:
		return "", nil, nil
	case len(ids) > 1:
		return "", nil, fmt.Errorf("standin: %d OpenSearch domains, want at most 1", len(ids))
	}
	arn := r.V.Attr[ids[0]+".Arn"]
	ap, ok := t.Resources[ids[0]].Properties["AccessPolicies"]
	if !ok {
		return arn, nil, nil
	}
	doc, err := r.JSON(ap)
	if err != nil {
		return "", nil, fmt.Errorf("standin: domain access policy: %w", err)
	}
	p, err := iampolicy.Parse(doc)
	if err != nil {
		return "", nil, fmt.Errorf("standin: domain access policy: %w", err)
	}
	return arn, p, nil
}

// rolePolicies gathers each role's identity-based policies: its inline
// Policies and every AWS::IAM::Policy attached to it. A managed policy would
// need AWS's own documents, which the stand-in does not have: an error.
func rolePolicies(t *cfn.Template, r *cfn.Resolver) (map[string][]*iampolicy.Policy, error) {
	out := map[string][]*iampolicy.Policy{}
	parse := func(role string, doc any) error {
		b, err := r.JSON(doc)
		if err != nil {
			return fmt.Errorf("standin: policy of %s: %w", role, err)
		}
		p, err := iampolicy.Parse(b)
		if err != nil {
			return fmt.Errorf("standin: policy of %s: %w", role, err)
		}
		out[role] = append(out[role], p)
		return nil
	}
	for _, id := range t.OfType("AWS::IAM::Role") {
		props := t.Resources[id].Properties
		if m := list(props["ManagedPolicyArns"]); len(m) > 0 {
			return nil, fmt.Errorf("standin: role %s has managed policies %v, which the stand-in cannot evaluate", id, m)
		}
		for _, p := range list(props["Policies"]) {
			if err := parse(id, mapOf(p)["PolicyDocument"]); err != nil {
				return nil, err
			}
		}
	}
	for _, id := range t.OfType("AWS::IAM::Policy") {
		props := t.Resources[id].Properties
		for _, role := range list(props["Roles"]) {
			ref, _ := mapOf(role)["Ref"].(string)
			if _, ok := t.Resources[ref]; !ok {
				return nil, fmt.Errorf("standin: policy %s names role %v, not one of the template", id, role)
			}
			if err := parse(ref, props["PolicyDocument"]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// startFunctions prepares a pool per function: its bootstrap from the
// assembly's assets, the template's environment with extraEnv over it, its
// role's credentials.
func (s *Stack) startFunctions(t *cfn.Template, r *cfn.Resolver, a *Synthesized, roles map[string][]*iampolicy.Policy, extraEnv map[string]string, logs io.Writer) error {
	for _, id := range t.OfType("AWS::Lambda::Function") {
		p := t.Resources[id].Properties
		name := r.V.Ref[id]
		code := mapOf(p["Code"])
		key, _ := code["S3Key"].(string)
		dir, ok := a.Assets[strings.TrimSuffix(key, ".zip")]
		if !ok {
			return fmt.Errorf("standin: function %s: no asset for %s in the assembly", name, key)
		}
		env := map[string]string{}
		for k, v := range mapOf(mapOf(p["Environment"])["Variables"]) {
			sv, err := r.String(v)
			if err != nil {
				return fmt.Errorf("standin: function %s: %s: %w", name, k, err)
			}
			env[k] = sv
		}
		for k, v := range extraEnv {
			env[k] = v
		}
		// How the functions reach the stand-in's AWS: one HTTPS endpoint
		// for every service (the SDK reads AWS_ENDPOINT_URL), whose CA Go
		// trusts through SSL_CERT_FILE. Nothing else is added, but what
		// the test asks (Options.FunctionEnv).
		env["AWS_ENDPOINT_URL"] = s.Checker.URL()
		env["SSL_CERT_FILE"] = s.Checker.CAFile()
		roleARN, roleID, err := functionRole(t, r, name)
		if err != nil {
			return err
		}
		role := awscheck.Role{ARN: roleARN, Session: name, Policies: roles[roleID]}
		creds := s.Checker.Credentials(role)
		reserved := int(num(p["ReservedConcurrentExecutions"]))
		if err := s.Account.Reserve(name, reserved); err != nil {
			// CloudFormation's CreateFunction fails, and the stack with it.
			return fmt.Errorf("standin: the stack cannot be created on an account with %d concurrent executions: function %s (%s): %w",
				s.Account.Quota(), name, id, err)
		}
		fn := lambdaemu.Function{
			Name: name, Path: filepath.Join(dir, "bootstrap"), Env: env,
			Timeout:  time.Duration(num(p["Timeout"])) * time.Second,
			MemoryMB: int(num(p["MemorySize"])), MaxConcurrency: reserved, Account: s.Account,
			Credentials: func() (string, string, string) {
				return creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken
			},
			Region: Region, Logs: logs,
		}
		if fn.Timeout == 0 {
			fn.Timeout = 3 * time.Second // Lambda's default
		}
		if fn.MemoryMB == 0 {
			fn.MemoryMB = 128
		}
		fn.EphemeralMB = ephemeralMB(p)
		s.Functions[name] = lambdaemu.Start(fn)
	}
	return nil
}

// ephemeralMB is a function's EphemeralStorage.Size, its /tmp in MB, which
// lambdaemu bounds each instance's TMPDIR to; 0 (Lambda's default, 512)
// when the template sets none.
func ephemeralMB(props map[string]any) int {
	return int(num(mapOf(props["EphemeralStorage"])["Size"]))
}

// createTable creates the template's one table in dynalite with its keys and
// indexes, and returns its logical ID.
func createTable(ctx context.Context, t *cfn.Template, r *cfn.Resolver, db *dynamodb.Client) (string, error) {
	ids := t.OfType("AWS::DynamoDB::Table")
	if len(ids) != 1 {
		return "", fmt.Errorf("standin: %d tables, want 1", len(ids))
	}
	id := ids[0]
	props, err := r.Resolve(t.Resources[id].Properties)
	if err != nil {
		return "", err
	}
	// The template's properties are CreateTable's, by name, except those
	// CloudFormation handles with other calls (TTL, PITR, tags, protection).
	in := map[string]any{"TableName": r.V.Ref[id]}
	for _, k := range []string{"AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "LocalSecondaryIndexes",
		"BillingMode", "ProvisionedThroughput", "StreamSpecification", "SSESpecification"} {
		if v, ok := props.(map[string]any)[k]; ok {
			in[k] = v
		}
	}
	if ss := mapOf(in["StreamSpecification"]); ss != nil {
		ss["StreamEnabled"] = true
	}
	// dynalite wants GSIs' throughput under PROVISIONED only; on-demand
	// needs none, as on DynamoDB.
	b, _ := json.Marshal(in)
	var create dynamodb.CreateTableInput
	if err := unmarshalInput(b, &create); err != nil {
		return "", fmt.Errorf("standin: table %s: %w", id, err)
	}
	if _, err := db.CreateTable(ctx, &create); err != nil {
		return "", fmt.Errorf("standin: create table %s: %w", r.V.Ref[id], err)
	}
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: create.TableName}, 30*time.Second); err != nil {
		return "", fmt.Errorf("standin: table %s: %w", r.V.Ref[id], err)
	}
	return id, nil
}

// unmarshalInput decodes CreateTable's JSON (the template's casing) into the
// SDK's input type, whose fields have the same names.
func unmarshalInput(b []byte, in *dynamodb.CreateTableInput) error {
	var raw struct {
		TableName                                     string
		AttributeDefinitions                          []struct{ AttributeName, AttributeType string }
		KeySchema                                     []struct{ AttributeName, KeyType string }
		BillingMode                                   string
		GlobalSecondaryIndexes, LocalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []struct{ AttributeName, KeyType string }
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
		}
		StreamSpecification *struct{ StreamViewType string }
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	keys := func(ks []struct{ AttributeName, KeyType string }) []types.KeySchemaElement {
		var out []types.KeySchemaElement
		for _, k := range ks {
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
		}
		return out
	}
	in.TableName = aws.String(raw.TableName)
	in.BillingMode = types.BillingMode(raw.BillingMode)
	in.KeySchema = keys(raw.KeySchema)
	for _, a := range raw.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, g := range raw.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{IndexName: aws.String(g.IndexName), KeySchema: keys(g.KeySchema),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(g.Projection.ProjectionType), NonKeyAttributes: g.Projection.NonKeyAttributes}})
	}
	for _, l := range raw.LocalSecondaryIndexes {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{IndexName: aws.String(l.IndexName), KeySchema: keys(l.KeySchema),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(l.Projection.ProjectionType), NonKeyAttributes: l.Projection.NonKeyAttributes}})
	}
	if raw.StreamSpecification != nil {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(raw.StreamSpecification.StreamViewType)}
	}
	return nil
}

// newStream reads the template's event source mapping of the table's stream.
func (s *Stack) newStream(t *cfn.Template, r *cfn.Resolver, tableID string, roles map[string][]*iampolicy.Policy) (*stream, error) {
	ids := t.OfType("AWS::Lambda::EventSourceMapping")
	if len(ids) != 1 {
		return nil, fmt.Errorf("standin: %d event source mappings, want 1", len(ids))
	}
	if err := checkMappingRights(t, r, ids[0], roles); err != nil {
		return nil, err
	}
	p := t.Resources[ids[0]].Properties
	src, err := r.String(p["EventSourceArn"])
	if err != nil {
		return nil, err
	}
	if src != r.V.Attr[tableID+".StreamArn"] {
		return nil, fmt.Errorf("standin: the event source mapping reads %s, not the table's stream", src)
	}
	fnName, err := r.String(p["FunctionName"])
	if err != nil {
		return nil, err
	}
	pool := s.Functions[fnName]
	if pool == nil {
		return nil, fmt.Errorf("standin: the event source mapping invokes %s, not a function of the template", fnName)
	}
	st := &stream{client: s.engine, table: r.V.Ref[tableID], arn: src, region: Region, batchSize: 100, retries: -1, logf: s.logf,
		invoke: func(ctx context.Context, payload []byte) ([]byte, string, error) {
			res, err := pool.Invoke(ctx, payload)
			return res.Payload, res.FunctionError, err
		}}
	st.cond = sync.NewCond(&st.mu)
	st.last = map[string]map[string]types.AttributeValue{}
	if v, ok := p["BatchSize"]; ok {
		st.batchSize = int(num(v))
	}
	if v, ok := p["MaximumBatchingWindowInSeconds"]; ok {
		st.window = time.Duration(num(v)) * time.Second
	}
	if v, ok := p["MaximumRetryAttempts"]; ok {
		st.retries = int(num(v))
	}
	if st.retries < 0 {
		st.retries = 10000 // Lambda's default, -1: until the record expires
	}
	st.bisect, _ = p["BisectBatchOnFunctionError"].(bool)
	for _, rt := range list(p["FunctionResponseTypes"]) {
		st.partial = st.partial || rt == "ReportBatchItemFailures"
	}
	for _, f := range list(mapOf(p["FilterCriteria"])["Filters"]) {
		pat, _ := mapOf(f)["Pattern"].(string)
		var m map[string]any
		if err := json.Unmarshal([]byte(pat), &m); err != nil {
			return nil, fmt.Errorf("standin: filter %q: %w", pat, err)
		}
		st.filters = append(st.filters, m)
	}
	table := t.Resources[tableID].Properties
	st.viewType, _ = mapOf(table["StreamSpecification"])["StreamViewType"].(string)
	for _, k := range list(table["KeySchema"]) {
		st.keys = append(st.keys, fmt.Sprint(mapOf(k)["AttributeName"]))
	}
	return st, nil
}

// permission is one AWS::Lambda::Permission for API Gateway.
type permission struct {
	function string
	pattern  string // the SourceArn, an ArnLike pattern
	source   *regexp.Regexp
}

// permissions reads the template's Lambda permissions for API Gateway: the
// gateway may invoke a function only for a source ARN one of them allows, as
// Lambda's resource policy decides.
func permissions(t *cfn.Template, r *cfn.Resolver) ([]permission, error) {
	var out []permission
	for _, id := range t.OfType("AWS::Lambda::Permission") {
		p := t.Resources[id].Properties
		if p["Principal"] != "apigateway.amazonaws.com" || p["Action"] != "lambda:InvokeFunction" {
			continue
		}
		fn, err := r.String(p["FunctionName"])
		if err != nil {
			return nil, err
		}
		src, err := r.String(p["SourceArn"])
		if err != nil {
			return nil, err
		}
		fn = fn[strings.LastIndex(fn, ":")+1:]
		out = append(out, permission{function: fn, pattern: src, source: wildcard(src)})
	}
	return out, nil
}

// wildcard compiles an ArnLike pattern (* and ?).
func wildcard(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, c := range p {
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// invoker is the gateway's way to the functions: Lambda's Invoke, allowed
// only where a permission of the template names the source.
type invoker struct {
	s     *Stack
	perms []permission
}

func (v *invoker) Invoke(ctx context.Context, function string, payload []byte) ([]byte, string, error) {
	pool, err := v.allowed(function, payload)
	if err != nil {
		return nil, "", err
	}
	res, err := pool.Invoke(ctx, payload)
	return res.Payload, res.FunctionError, err
}

// InvokeStream is Lambda's InvokeWithResponseStream, which needs the same
// lambda:InvokeFunction permission as Invoke.
func (v *invoker) InvokeStream(ctx context.Context, function string, payload []byte) (io.ReadCloser, error) {
	pool, err := v.allowed(function, payload)
	if err != nil {
		return nil, err
	}
	return pool.InvokeStream(ctx, payload)
}

// allowed is the function API Gateway may invoke with payload, or Lambda's
// refusal.
func (v *invoker) allowed(function string, payload []byte) (*lambdaemu.Pool, error) {
	pool := v.s.Functions[function]
	if pool == nil {
		return nil, fmt.Errorf("standin: no function %s", function)
	}
	source, authorizer, err := sourceARN(payload)
	if err != nil {
		return nil, err
	}
	allowed := false
	for _, p := range v.perms {
		switch {
		case p.function != function:
		case authorizer:
			// The authorizer's ID is not in its event: any permission for
			// an authorizer of this API will do.
			allowed = allowed || strings.HasPrefix(p.pattern, source)
		default:
			allowed = allowed || p.source.MatchString(source)
		}
	}
	if !allowed {
		// Lambda refuses API Gateway's call; the gateway answers 500
		// (an integration or authorizer configuration error).
		v.s.logf("lambda: apigateway.amazonaws.com may not invoke %s from %s: no permission in the template", function, source)
		return nil, fmt.Errorf("standin: AccessDeniedException: apigateway.amazonaws.com may not invoke %s from %s", function, source)
	}
	return pool, nil
}

// sourceARN is the execute-api ARN API Gateway invokes a function as: the
// method's for an integration; for an authorizer, the prefix of the
// authorizer's ARN.
func sourceARN(payload []byte) (source string, authorizer bool, err error) {
	var ev struct {
		Type           string `json:"type"`
		MethodArn      string `json:"methodArn"`
		RequestContext struct {
			AccountID    string `json:"accountId"`
			APIID        string `json:"apiId"`
			Stage        string `json:"stage"`
			HTTPMethod   string `json:"httpMethod"`
			ResourcePath string `json:"resourcePath"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return "", false, fmt.Errorf("standin: gateway event: %w", err)
	}
	if ev.Type == "REQUEST" || ev.Type == "TOKEN" {
		// arn:aws:execute-api:<region>:<acct>:<api>/<stage>/<method>/<path>
		i := strings.Index(ev.MethodArn, "/")
		if i < 0 {
			return "", false, fmt.Errorf("standin: authorizer event without a methodArn")
		}
		return ev.MethodArn[:i] + "/authorizers/", true, nil
	}
	c := ev.RequestContext
	return fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s%s", Region, c.AccountID, c.APIID, c.Stage, c.HTTPMethod, c.ResourcePath), false, nil
}
