//lint:file-ignore SA1019 the CDK's Go API still returns a stack's synthesis messages as these cxapi types

package stack

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
)

// The tests synthesize two variants once each: the defaults (managed
// domain), and a customer with other limits and an alarm e-mail.
var (
	defaultContext = map[string]any{}
	customContext  = map[string]any{
		KeyCustomer: "acme", KeyKeyLimit: "120", KeyIPLimit: "600",
		KeyEmbedDimensions: "512", KeyAuthorizerCacheSeconds: "30", KeyAlarmEmail: "ops@example.com",
		KeyStageRateLimit: "300", KeyStageBurstLimit: "600", KeyAuthorizerConcurrency: "10",
		KeyResponseStreaming: "false",
	}
)

// bins are the functions, built once for the whole package (TestMain), and
// root the module's root.
var (
	bins Binaries
	root string
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	// No jsii.Close(): it races with the runtime's own wait for the node
	// process (jsii-runtime-go 1.127, seen with -race); node exits when the
	// test binary does.
	dir, err := os.MkdirTemp("", "doclib-infra-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if root, err = ModuleRoot(); err != nil {
		return 0, err
	}
	if bins, err = Build(root, dir, lambdaapp.Functions); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// synthesized is one variant's template and cdk-nag's messages.
type synthesized struct {
	cfg      Config
	stack    awscdk.Stack
	template assertions.Template
	json     map[string]any // the template as JSON
	cfn      *cfn.Template  // the template as the stand-in reads it
	messages []*cxapi.SynthesisMessage
}

var (
	synthMu sync.Mutex
	synths  = map[string]*synthesized{}
)

// synth synthesizes a variant once, with the AwsSolutions checks applied as
// the app applies them.
func synth(t *testing.T, context map[string]any) *synthesized {
	t.Helper()
	synthMu.Lock()
	defer synthMu.Unlock()
	key := fmt.Sprint(context)
	if s, ok := synths[key]; ok {
		return s
	}
	// As the app does: cdk.json's context (its feature flags) under the
	// variant's own values.
	ctx, err := ProjectContext(root)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range context {
		ctx[k] = v
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &ctx})
	cfg, err := ParseConfig(func(k string) any { return app.Node().TryGetContext(jsii.String(k)) })
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(app, cfg, bins)
	if err != nil {
		t.Fatal(err)
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(nil), nil)
	tmpl := assertions.Template_FromStack(st, nil) // also checks for dependency cycles
	s := &synthesized{cfg: cfg, stack: st, template: tmpl}
	raw, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s.json); err != nil {
		t.Fatal(err)
	}
	if s.cfn, err = cfn.Parse(raw); err != nil {
		t.Fatal(err)
	}
	// The assembly Template_FromStack synthesized (not forced again).
	if msgs := app.Synth(nil).GetStackArtifact(st.ArtifactId()).Messages(); msgs != nil {
		s.messages = *msgs
	}
	synths[key] = s
	return s
}

// must turns a failed assertions call (a panic through jsii) into a test error.
func must(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	f()
}

// resource is one template resource.
type resource struct {
	ID        string
	Type      string
	Props     map[string]any
	DependsOn any
	Metadata  map[string]any
	Deletion  string
}

// resources are the resources of typ, by logical ID.
func (s *synthesized) resources(typ string) []resource {
	var out []resource
	for _, id := range s.cfn.OfType(typ) {
		r := s.cfn.Resources[id]
		out = append(out, resource{ID: id, Type: typ, Props: r.Properties, DependsOn: r.DependsOn, Metadata: r.Metadata, Deletion: r.DeletionPolicy})
	}
	return out
}

func (s *synthesized) allResources() []resource {
	types := map[string]bool{}
	for _, r := range s.cfn.Resources {
		types[r.Type] = true
	}
	var out []resource
	for _, typ := range slices.Sorted(maps.Keys(types)) {
		out = append(out, s.resources(typ)...)
	}
	return out
}

// one returns the only resource of typ.
func (s *synthesized) one(t *testing.T, typ string) resource {
	t.Helper()
	rs := s.resources(typ)
	if len(rs) != 1 {
		t.Fatalf("%d resources of type %s, want 1", len(rs), typ)
	}
	return rs[0]
}

// functionID returns the logical ID of the function named name.
func (s *synthesized) functionID(t *testing.T, name string) string {
	t.Helper()
	for _, f := range s.resources("AWS::Lambda::Function") {
		if f.Props["FunctionName"] == s.cfg.ResourcePrefix()+"-"+name {
			return f.ID
		}
	}
	t.Fatalf("no function %s", name)
	return ""
}

// ref returns the logical ID of a {"Ref": id} value, or "".
func ref(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	s, _ := m["Ref"].(string)
	return s
}

// getAtt returns the logical ID and attribute of {"Fn::GetAtt": [id, attr]}.
func getAtt(v any) (string, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", ""
	}
	a, ok := m["Fn::GetAtt"].([]any)
	if !ok || len(a) != 2 {
		return "", ""
	}
	id, _ := a[0].(string)
	attr, _ := a[1].(string)
	return id, attr
}

// render writes an intrinsic as text: a literal as itself, {"Ref": X} as
// <X>, {"Fn::GetAtt": [X, A]} as <X.A>, Fn::Join joined.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64, bool:
		return fmt.Sprint(x)
	case map[string]any:
		if id := ref(x); id != "" {
			return "<" + id + ">"
		}
		if id, attr := getAtt(x); id != "" {
			return "<" + id + "." + attr + ">"
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, render(p))
			}
			return strings.Join(parts, j[0].(string))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// list turns a JSON value that may be one item or a list into a list.
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}
