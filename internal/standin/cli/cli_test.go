package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/doclib/doclib/infra/stack"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/demo"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	return Parse(args, nil, io.Discard)
}

// appError is the error the CDK app gives for context: the sentence
// `cdk synth -c ...` prints after "infra: ".
func appError(context map[string]string) error {
	_, err := stack.ParseConfig(func(k string) any {
		if v, ok := context[k]; ok {
			return v
		}
		return nil
	})
	return err
}

func TestParseRefusesWhatTheAppRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		key  string
	}{
		{[]string{"-c", "search=opensearch"}, stack.KeySearch},
		{[]string{"-c", "usagePlans=maybe"}, stack.KeyUsagePlans},
		{[]string{"-c", "keyLimit=many"}, stack.KeyKeyLimit},
		{[]string{"-c", "customer=Acme"}, stack.KeyCustomer},
		{[]string{"--customer", "Acme"}, stack.KeyCustomer},
		{[]string{"-c", "accountHelp=In the app."}, stack.KeyAccountHelp},
		// A key of the other tier is refused, not ignored.
		{[]string{"-c", "search=embedded", "-c", "opensearchSize=small"}, stack.KeyOpenSearchSize},
		{[]string{"-c", "searchMemoryMb=2048"}, stack.KeySearchMemoryMB},
	} {
		o, err := parse(t, c.args...)
		if err == nil {
			t.Errorf("%q: accepted (%v), want the app's refusal", c.args, o.Context)
			continue
		}
		if !strings.HasPrefix(err.Error(), "context "+c.key+"=") {
			t.Errorf("%q: %q, want an error naming %s", c.args, err, c.key)
		}
		// The same sentence the app gives, for the same context.
		ctx := contextFlag{}
		for i := 0; i+1 < len(c.args); i += 2 {
			if c.args[i] == "--customer" {
				ctx[stack.KeyCustomer] = c.args[i+1]
			} else if err := ctx.Set(c.args[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if want := appError(ctx); want == nil || err.Error() != want.Error() {
			t.Errorf("%q: %q, want the app's %q", c.args, err, want)
		}
	}
}

func TestParseRefusesABadCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "search"}, "want KEY=VALUE"},
		{[]string{"-c", "=embedded"}, "the key is empty"},
		{[]string{"search=embedded"}, `"search=embedded" is not a flag: a context value goes after -c, as in -c search=embedded`},
		{[]string{"embedded"}, `"embedded" is not a flag`},
		{[]string{"--cutsomer", "acme"}, "flag provided but not defined: -cutsomer (scripts/standin --help lists the options)"},
		{[]string{"--customer", "acme", "-c", "customer=beta"}, "--customer acme and -c customer=beta name two customers"},
	} {
		if o, err := parse(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (%+v), want an error with %q", c.args, err, o, c.want)
		}
	}
}

func TestParseContext(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[string]string
	}{
		{nil, map[string]string{}},
		{[]string{"--customer", "acme"}, map[string]string{"customer": "acme"}},
		{[]string{"-c", "customer=acme"}, map[string]string{"customer": "acme"}},
		{[]string{"--customer", "acme", "-c", "customer=acme"}, map[string]string{"customer": "acme"}},
		// Repeated, and the long form; the last value of a key wins.
		{[]string{"-c", "search=embedded", "-c", "usagePlans=true", "--context", "usagePlans=false", "--customer=acme"},
			map[string]string{"search": "embedded", "usagePlans": "false", "customer": "acme"}},
		// A value may hold "=" and spaces.
		{[]string{"-c", "accountHelp=In the Acme app, {action}. a=b"}, map[string]string{"accountHelp": "In the Acme app, {action}. a=b"}},
	} {
		o, err := parse(t, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !maps.Equal(o.Context, c.want) {
			t.Errorf("%q: context %v, want %v", c.args, o.Context, c.want)
		}
	}
	o, err := parse(t, "-c", "search=embedded", "-c", "usagePlans=false", "--customer", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Search != stack.SearchEmbedded || o.Config.UsagePlans || o.Config.Customer != "acme" || o.Config.StackName() != "Doclib-acme" {
		t.Errorf("config %+v, want the embedded tier without usage plans for acme", o.Config)
	}
	if got, want := o.Effective(), "customer=acme search=embedded usagePlans=false"; got != want {
		t.Errorf("effective context %q, want %q", got, want)
	}
	o, err = parse(t, "--addr", "127.0.0.1:9", "--data", "d.json", "--no-cache", "--s3-loopback", "-v")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "127.0.0.1:9" || o.Data != "d.json" || !o.NoCache || !o.Verbose || !o.S3Loopback {
		t.Errorf("options %+v, want each flag's value", o)
	}
	if got, want := o.Effective(), "customer=demo search=domain"; got != want {
		t.Errorf("effective context %q, want the app's defaults %q", got, want)
	}
	if o, err := parse(t); err != nil || o.Addr != DefaultAddr || o.NoCache || o.S3Loopback {
		t.Errorf("no flags: %+v, %v; want %s and the cache", o, err, DefaultAddr)
	}
}

func TestParseWarnsOfKeysNothingReads(t *testing.T) {
	o, err := parse(t, "-c", "usageplans=false", "-c", "@aws-cdk/aws-apigateway:disableCloudWatchRole=false", "-c", "search=embedded")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Unknown) != 1 || o.Unknown[0] != "usageplans" {
		t.Errorf("unknown keys %v, want usageplans alone (a feature flag is the CDK's)", o.Unknown)
	}
	if w := o.Warnings(); len(w) != 1 || !strings.Contains(w[0], `-c usageplans=false: the app reads no context key "usageplans"`) {
		t.Errorf("warnings %q, want one for usageplans", w)
	}
	if !o.Config.UsagePlans {
		t.Error("usageplans=false turned the usage plans off: keys are case-sensitive")
	}
	// Passed on all the same, as cdk synth does.
	if o.Context["usageplans"] != "false" || o.Context["@aws-cdk/aws-apigateway:disableCloudWatchRole"] != "false" {
		t.Errorf("context %v, want every key passed on", o.Context)
	}
	if got, want := o.Effective(), "@aws-cdk/aws-apigateway:disableCloudWatchRole=false customer=demo search=embedded"; got != want {
		t.Errorf("effective context %q, want %q", got, want)
	}
}

func TestParseReadsTheProjectContext(t *testing.T) {
	project := map[string]any{"search": "embedded", "keyLimit": float64(30)}
	o, err := Parse(nil, project, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Search != stack.SearchEmbedded || o.Config.KeyLimit != 30 {
		t.Errorf("config %+v, want cdk.json's search and keyLimit", o.Config)
	}
	// -c outranks cdk.json, and is checked against cdk.json's other values.
	if o, err := Parse([]string{"-c", "search=domain"}, project, io.Discard); err != nil || o.Config.Search != stack.SearchDomain {
		t.Errorf("-c search=domain over cdk.json: %v, %v; want the domain tier", o, err)
	}
	if _, err := Parse([]string{"-c", "opensearchSize=small"}, project, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "context opensearchSize=") {
		t.Errorf("opensearchSize with cdk.json's embedded tier: %v, want the app's refusal", err)
	}
	if _, err := Parse(nil, map[string]any{"keyLimit": 1.5}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "context keyLimit=1.5") {
		t.Errorf("a bad value in cdk.json: %v, want the app's refusal", err)
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	if _, err := Parse([]string{"--help"}, nil, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-c search=embedded", "-c usagePlans=false", "--customer", "-no-cache", CacheDir, "infra/README.md", "-addr"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %q:\n%s", want, out.String())
		}
	}
	// An error is not buried under the usage.
	out.Reset()
	if _, err := Parse([]string{"--bogus"}, nil, &out); err == nil || out.Len() != 0 {
		t.Errorf("--bogus: %v, wrote %q; want an error and nothing written", err, out.String())
	}
}

func TestReady(t *testing.T) {
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := ExampleKey(d); got != demo.Keys[0].Secret {
		t.Errorf("example key of the demo data set %q, want the first demo key", got)
	}
	var out bytes.Buffer
	Ready{Stack: "Doclib-demo", Context: "customer=demo search=domain", Table: "t", DynamoDB: "http://127.0.0.1:1",
		URL: "http://127.0.0.1:8090/api", Source: "demo", Data: d, PID: 42}.Print(&out)
	for _, want := range []string{
		"stack Doclib-demo, context customer=demo search=domain",
		"curl -s -H 'Authorization: Bearer " + demo.Keys[0].Secret + "' http://127.0.0.1:8090/api/libraries\n",
		"kill 42",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed\n%s\nwithout %q", out.String(), want)
		}
	}
	// A data set without a demo key has no secret to show.
	other := &doclib.DataSet{APIKeys: []*doclib.APIKey{{Hash: doclib.HashKey("dlk_other")}}}
	if got := ExampleKey(other); got != "" {
		t.Errorf("example key of another data set %q, want none", got)
	}
	out.Reset()
	Ready{URL: "http://h/api", Data: other}.Print(&out)
	if !strings.Contains(out.String(), `"Authorization: Bearer $`) {
		t.Errorf("printed\n%s\nwithout a curl line naming a variable", out.String())
	}
}
