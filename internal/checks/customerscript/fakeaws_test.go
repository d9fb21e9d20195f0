package customerscript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jmespath/go-jmespath"
)

// The fake aws command. The test binary runs as it when it is started under
// the name aws (run links it into the fakes' folder), so that the fake can
// do what the script relies on the real AWS CLI (version 2) for:
//
//   - refuse what the CLI refuses before it sends anything: an unknown
//     command or option, a missing required option, a value outside an
//     option's choices, a --query that is not JMESPath (exit status 252);
//   - answer from fixtures in the JSON the service returns, as the CLI
//     prints it: --query applied with a real JMESPath implementation, then
//     --output json (indented by 4) or text (the CLI's text layout: tabs,
//     None, True);
//   - paginate as the CLI does: a fixture of several pages is merged before
//     --query under --output json, and queried page by page under --output
//     text (where a count per page comes out as one number per page);
//   - fail as a refused call does: "An error occurred (Code) when calling the
//     Operation operation: Message" on stderr, exit status 254.
//
// Fixtures are a JSON object in the file FAKE_AWS_FIXTURES: "service command"
// to the answer, or "service command --option value" for the call with that
// option's value. An answer is the service's JSON; {"$pages": [...]} for a
// paginated answer over several pages; {"$error": {"Code", "Message"}} for a
// refused call. A call without a fixture fails the test's script (exit 3).
// The fake does not emulate --max-items or --starting-token, and prints an
// object's keys sorted, where the CLI keeps the service's order.

// option is how the CLI parses one option.
type option struct {
	flag    bool     // takes no value
	list    bool     // takes one value or more
	integer bool     // its value must be an integer
	choices []string // its value must be one of these
}

// operation is one AWS CLI command: its API operation, options, and for a
// paginated one its result keys and the tokens that its pages carry.
type operation struct {
	api        string
	options    map[string]option
	required   []string
	resultKeys []string
	tokens     []string
	// pageSize: the CLI offers --page-size (the API has a limit parameter).
	pageSize bool
	// global: the service has an endpoint outside any Region, so the call
	// needs no Region.
	global bool
}

var globalOptions = map[string]option{
	"--output":              {choices: []string{"json", "text", "table", "yaml", "yaml-stream"}},
	"--query":               {},
	"--region":              {},
	"--profile":             {},
	"--endpoint-url":        {},
	"--color":               {choices: []string{"on", "off", "auto"}},
	"--ca-bundle":           {},
	"--cli-read-timeout":    {integer: true},
	"--cli-connect-timeout": {integer: true},
	"--cli-binary-format":   {choices: []string{"base64", "raw-in-base64-out"}},
	"--no-paginate":         {flag: true},
	"--debug":               {flag: true},
	"--no-verify-ssl":       {flag: true},
	"--no-sign-request":     {flag: true},
	"--no-cli-pager":        {flag: true},
	"--cli-auto-prompt":     {flag: true},
	"--no-cli-auto-prompt":  {flag: true},
}

// operations are the commands scripts/customer runs, with the options of
// each as the AWS CLI reference lists them.
var operations = map[string]operation{
	"cloudformation describe-stacks": {api: "DescribeStacks", options: opts("--stack-name"),
		resultKeys: []string{"Stacks"}, tokens: []string{"NextToken"}},
	"dynamodb list-tables": {api: "ListTables", options: opts(),
		resultKeys: []string{"TableNames"}, tokens: []string{"LastEvaluatedTableName"}, pageSize: true},
	"dynamodb update-table": {api: "UpdateTable", required: []string{"--table-name"},
		options: merge(opts("--table-name", "--attribute-definitions", "--billing-mode", "--provisioned-throughput",
			"--global-secondary-index-updates", "--stream-specification", "--sse-specification", "--replica-updates",
			"--table-class", "--on-demand-throughput", "--warm-throughput", "--multi-region-consistency",
			"--global-table-witness-updates"), flags("--deletion-protection-enabled", "--no-deletion-protection-enabled"))},
	"dynamodb wait table-exists": {api: "DescribeTable", required: []string{"--table-name"}, options: opts("--table-name")},
	"dynamodb delete-table":      {api: "DeleteTable", required: []string{"--table-name"}, options: opts("--table-name")},
	"opensearch list-domain-names": {api: "ListDomainNames",
		options: map[string]option{"--engine-type": {choices: []string{"OpenSearch", "Elasticsearch"}}}},
	"opensearch delete-domain": {api: "DeleteDomain", required: []string{"--domain-name"}, options: opts("--domain-name")},
	"resourcegroupstaggingapi get-resources": {api: "GetResources",
		options: merge(opts("--tags-per-page", "--resources-per-page"),
			map[string]option{"--tag-filters": {list: true}, "--resource-type-filters": {list: true}, "--resource-arn-list": {list: true}},
			flags("--include-compliance-details", "--no-include-compliance-details", "--exclude-compliant-resources", "--no-exclude-compliant-resources")),
		resultKeys: []string{"ResourceTagMappingList"}, tokens: []string{"PaginationToken"}, pageSize: true},
	"s3api list-object-versions": {api: "ListObjectVersions", required: []string{"--bucket"},
		options: merge(opts("--bucket", "--delimiter", "--encoding-type", "--prefix", "--expected-bucket-owner",
			"--request-payer"), map[string]option{"--optional-object-attributes": {list: true}}),
		resultKeys: []string{"Versions", "DeleteMarkers", "CommonPrefixes"},
		tokens:     []string{"NextKeyMarker", "NextVersionIdMarker", "IsTruncated"}, pageSize: true},
	"s3api delete-object": {api: "DeleteObject", required: []string{"--bucket", "--key"},
		options: merge(opts("--bucket", "--key", "--mfa", "--version-id", "--request-payer", "--expected-bucket-owner",
			"--if-match", "--if-match-last-modified-time", "--if-match-size"),
			flags("--bypass-governance-retention", "--no-bypass-governance-retention"))},
	"s3api delete-bucket": {api: "DeleteBucket", required: []string{"--bucket"}, options: opts("--bucket", "--expected-bucket-owner")},
	"logs describe-log-groups": {api: "DescribeLogGroups",
		options: merge(opts("--log-group-name-prefix", "--log-group-name-pattern", "--log-group-class"),
			map[string]option{"--account-identifiers": {list: true}, "--log-group-identifiers": {list: true}},
			flags("--include-linked-accounts", "--no-include-linked-accounts")),
		resultKeys: []string{"logGroups"}, tokens: []string{"nextToken"}, pageSize: true},
	"logs delete-log-group": {api: "DeleteLogGroup", required: []string{"--log-group-name"}, options: opts("--log-group-name")},
	"logs describe-resource-policies": {api: "DescribeResourcePolicies",
		options: map[string]option{"--resource-arn": {}, "--policy-scope": {choices: []string{"ACCOUNT", "RESOURCE"}}},
		// The policies are few (10 a Region); the API pages them all the same.
		resultKeys: []string{"resourcePolicies"}, tokens: []string{"nextToken"}, pageSize: true},
	"apigateway get-api-keys": {api: "GetApiKeys",
		options:    merge(opts("--name-query", "--customer-id"), flags("--include-values", "--no-include-values")),
		resultKeys: []string{"items"}, tokens: []string{"position"}, pageSize: true},
	"apigateway delete-api-key": {api: "DeleteApiKey", required: []string{"--api-key"}, options: opts("--api-key")},
	"apigateway get-usage-plans": {api: "GetUsagePlans", options: opts("--key-id"),
		resultKeys: []string{"items"}, tokens: []string{"position"}, pageSize: true},
	"lambda get-account-settings": {api: "GetAccountSettings", options: opts()},
	"lambda list-functions": {api: "ListFunctions",
		options:    map[string]option{"--master-region": {}, "--function-version": {choices: []string{"ALL"}}},
		resultKeys: []string{"Functions"}, tokens: []string{"NextMarker"}, pageSize: true},
	"lambda get-function-concurrency": {api: "GetFunctionConcurrency", required: []string{"--function-name"},
		options: opts("--function-name")},
	"service-quotas get-service-quota": {api: "GetServiceQuota", required: []string{"--service-code", "--quota-code"},
		options: opts("--service-code", "--quota-code", "--context-id")},
	// STS has a global endpoint: it answers without a Region.
	"sts get-caller-identity": {api: "GetCallerIdentity", options: opts(), global: true},
}

func opts(names ...string) map[string]option {
	m := map[string]option{}
	for _, n := range names {
		m[n] = option{}
	}
	return m
}

func flags(names ...string) map[string]option {
	m := map[string]option{}
	for _, n := range names {
		m[n] = option{flag: true}
	}
	return m
}

func merge(ms ...map[string]option) map[string]option {
	out := map[string]option{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// usageError is the CLI's refusal of a command line: exit status 252.
func usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "\nusage: aws [options] <command> <subcommand> [<subcommand> ...] [parameters]\n"+
		"To see help text, you can run:\n\n  aws help\n  aws <command> help\n  aws <command> <subcommand> help\n\n"+
		"aws: error: "+format+"\n", a...)
	return 252
}

// The CLI's words, and exit status 253 ("the system environment or
// configuration was invalid"), when it has no Region or no credentials for
// a call: it says so before it sends anything.
const (
	noRegion      = "\nYou must specify a region. You can also configure your region by running \"aws configure\".\n"
	noCredentials = "\nUnable to locate credentials. You can configure credentials by running \"aws configure\".\n"
)

// profile is the profile the CLI reads: --profile, else AWS_PROFILE, else
// default.
func profile(given map[string][]string) string {
	if p, ok := given["--profile"]; ok {
		return p[0]
	}
	if p := os.Getenv("AWS_PROFILE"); p != "" {
		return p
	}
	return "default"
}

// iniSection is the keys of one section of an AWS config or credentials
// file (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/...): a
// profile P is [P] in the credentials file, [profile P] in the config file
// but [default] for default.
func iniSection(env, file, section string) map[string]string {
	path := os.Getenv(env)
	if path == "" {
		home, _ := os.UserHomeDir()
		path = filepath.Join(home, ".aws", file)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var keys map[string]string
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			in = strings.TrimSpace(line[1:len(line)-1]) == section
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && in {
			if keys == nil {
				keys = map[string]string{}
			}
			keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return keys
}

func configSection(p string) map[string]string {
	if p != "default" {
		p = "profile " + p
	}
	return iniSection("AWS_CONFIG_FILE", "config", p)
}

// region is the Region of a call as the CLI resolves it.
func region(given map[string][]string) string {
	if r, ok := given["--region"]; ok {
		return r[0]
	}
	for _, env := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if r := os.Getenv(env); r != "" {
			return r
		}
	}
	return configSection(profile(given))["region"]
}

// hasCredentials tells whether the CLI's credential chain finds any: the
// variables, then the profile's keys in the credentials or config file, or
// a profile that gets them otherwise (IAM Identity Center, a process, a
// role). Whether they are still good is the sts fixture's to say.
func hasCredentials(given map[string][]string) bool {
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" && os.Getenv("AWS_SECRET_ACCESS_KEY") != "" {
		return true
	}
	p := profile(given)
	if c := iniSection("AWS_SHARED_CREDENTIALS_FILE", "credentials", p); c["aws_access_key_id"] != "" {
		return true
	}
	c := configSection(p)
	for _, k := range []string{"aws_access_key_id", "sso_session", "sso_start_url", "credential_process", "role_arn"} {
		if c[k] != "" {
			return true
		}
	}
	return false
}

// configureGet is `aws configure get NAME`: the value from the profile's
// section of the config file only (not the variables), else exit 1.
func configureGet(args []string, stdout, stderr io.Writer) int {
	given := map[string][]string{}
	var names []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--profile" && i+1 < len(args) {
			given["--profile"] = []string{args[i+1]}
			i++
			continue
		}
		names = append(names, args[i])
	}
	if len(names) != 1 {
		return usageError(stderr, "the following arguments are required: varname")
	}
	v := configSection(profile(given))[names[0]]
	if v == "" {
		return 1
	}
	fmt.Fprintln(stdout, v)
	return 0
}

// fakeAWS runs the fake aws command with args and returns its exit status.
func fakeAWS(args []string, stdout, stderr io.Writer) int {
	if log := os.Getenv("FAKE_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "aws %s\n", strings.Join(args, " "))
			f.Close()
		}
	}
	if len(args) >= 2 && args[0] == "configure" && args[1] == "get" {
		return configureGet(args[2:], stdout, stderr)
	}
	var words []string
	given := map[string][]string{}
	var order []string
	var op operation
	known := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			if known {
				return usageError(stderr, "Unknown options: %s", a)
			}
			words = append(words, a)
			key := strings.Join(words, " ")
			if op, known = operations[key]; !known && (len(words) == 2 && key != "dynamodb wait" || len(words) > 2) {
				return usageError(stderr, "argument operation: Invalid choice: %q is not a command this fake knows", key)
			}
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		o, ok := globalOptions[name]
		if !ok && known {
			o, ok = op.options[name]
			if !ok && len(op.resultKeys) > 0 {
				switch name {
				case "--page-size":
					o, ok = option{integer: true}, op.pageSize
				case "--max-items", "--starting-token":
					fmt.Fprintf(stderr, "fake aws: %s is not emulated\n", name)
					return 3
				}
			}
		}
		if !ok {
			return usageError(stderr, "Unknown options: %s", a)
		}
		var values []string
		switch {
		case o.flag:
			if hasValue {
				return usageError(stderr, "argument %s: ignored explicit argument %q", name, value)
			}
		case hasValue:
			values = []string{value}
		case o.list:
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				values = append(values, args[i])
			}
		default:
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				values = []string{args[i]}
			}
		}
		if !o.flag && len(values) == 0 {
			return usageError(stderr, "argument %s: expected one argument", name)
		}
		for _, v := range values {
			if o.choices != nil && !slices.Contains(o.choices, v) {
				return usageError(stderr, "argument %s: Invalid choice, valid choices are:\n\n%s", name, strings.Join(o.choices, " | "))
			}
			if _, err := strconv.Atoi(v); o.integer && err != nil {
				return usageError(stderr, "argument %s: invalid int value: %q", name, v)
			}
		}
		given[name] = values
		order = append(order, name)
	}
	if !known {
		return usageError(stderr, "the following arguments are required: command, operation")
	}
	var missing []string
	for _, r := range op.required {
		if _, ok := given[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return usageError(stderr, "the following arguments are required: %s", strings.Join(missing, ", "))
	}
	if !op.global && region(given) == "" {
		fmt.Fprint(stderr, noRegion)
		return 253
	}
	if !hasCredentials(given) {
		fmt.Fprint(stderr, noCredentials)
		return 253
	}
	var query *jmespath.JMESPath
	if q, ok := given["--query"]; ok {
		var err error
		if query, err = jmespath.Compile(q[0]); err != nil {
			fmt.Fprintf(stderr, "\nBad value for --query %s: %v\n", q[0], err)
			return 252
		}
	}
	output := "json"
	if o, ok := given["--output"]; ok {
		output = o[0]
	}
	if output != "json" && output != "text" {
		fmt.Fprintf(stderr, "fake aws: --output %s is not emulated\n", output)
		return 3
	}

	answer, err := fixture(strings.Join(words, " "), order, given)
	if err != nil {
		fmt.Fprintf(stderr, "fake aws: %v\n", err)
		return 3
	}
	if e, ok := answer.(map[string]any)["$error"].(map[string]any); ok {
		fmt.Fprintf(stderr, "\nAn error occurred (%v) when calling the %s operation: %v\n", e["Code"], op.api, e["Message"])
		return 254
	}
	pages := []any{answer}
	if p, ok := answer.(map[string]any)["$pages"].([]any); ok {
		if len(op.resultKeys) == 0 {
			fmt.Fprintf(stderr, "fake aws: a fixture of pages for %s, which is not paginated\n", op.api)
			return 3
		}
		pages = p
	}
	if _, ok := given["--no-paginate"]; ok || len(op.resultKeys) == 0 {
		// One call, printed whole: the first page with its tokens.
		pages = pages[:1]
		op.resultKeys = nil
	}

	search := func(v any) (any, error) {
		if query == nil {
			return v, nil
		}
		return query.Search(v)
	}
	var out bytes.Buffer
	if output == "json" {
		// The CLI merges the pages, then queries the whole.
		whole := pages[0]
		if op.resultKeys != nil {
			whole = mergePages(pages, op)
		}
		v, err := search(whole)
		if err != nil {
			fmt.Fprintf(stderr, "fake aws: %v\n", err)
			return 255
		}
		if m, ok := v.(map[string]any); !ok || len(m) > 0 {
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "    ")
			if err := enc.Encode(v); err != nil {
				fmt.Fprintf(stderr, "fake aws: %v\n", err)
				return 255
			}
		}
	} else {
		// The CLI queries each page: the first with all its keys but the
		// tokens, each later one with its result keys alone.
		for i, p := range pages {
			page := p
			if op.resultKeys != nil {
				page = pagePart(p, op, i == 0)
			}
			v, err := search(page)
			if err != nil {
				fmt.Fprintf(stderr, "fake aws: %v\n", err)
				return 255
			}
			formatText(&out, v, "", nil)
		}
	}
	_, _ = stdout.Write(out.Bytes())
	return 0
}

// fixture finds the answer to a call: by an option's value first, then by
// the command alone.
func fixture(command string, order []string, given map[string][]string) (any, error) {
	raw, err := os.ReadFile(os.Getenv("FAKE_AWS_FIXTURES"))
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	keys := []string{}
	for _, name := range order {
		keys = append(keys, command+" "+name+" "+strings.Join(given[name], " "))
	}
	keys = append(keys, command)
	for _, k := range keys {
		if a, ok := all[k]; ok {
			d := json.NewDecoder(bytes.NewReader(a))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				return nil, fmt.Errorf("fixture %q: %v", k, err)
			}
			v = numbers(v)
			if _, ok := v.(map[string]any); !ok {
				return nil, fmt.Errorf("fixture %q is not a JSON object", k)
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("no fixture answers %q (tried %q)", command, keys)
}

// pyFloat is a JSON number written with a fraction or exponent, which the
// CLI (Python) keeps a float and prints as such (300.0); every other number
// is an integer to it.
type pyFloat float64

func (f pyFloat) String() string {
	s := strconv.FormatFloat(float64(f), 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func (f pyFloat) MarshalJSON() ([]byte, error) { return []byte(f.String()), nil }

// numbers turns json.Numbers into float64 (which JMESPath computes with) or,
// for a float in the JSON, pyFloat.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		f, _ := x.Float64()
		if strings.ContainsAny(string(x), ".eE") {
			return pyFloat(f)
		}
		return f
	}
	return v
}

// mergePages is botocore's full result: the first page without its tokens,
// each result key the concatenation of every page's.
func mergePages(pages []any, op operation) any {
	whole := pagePart(pages[0], op, true)
	m := whole.(map[string]any)
	for _, k := range op.resultKeys {
		var all []any
		for _, p := range pages {
			if l, ok := p.(map[string]any)[k].([]any); ok {
				all = append(all, l...)
			}
		}
		if all != nil || m[k] != nil {
			m[k] = all
		}
	}
	return m
}

// pagePart is what the CLI's text output queries of a page: the first page
// without its tokens, a later page's result keys only.
func pagePart(p any, op operation, first bool) any {
	out := map[string]any{}
	for k, v := range p.(map[string]any) {
		if slices.Contains(op.tokens, k) || !first && !slices.Contains(op.resultKeys, k) {
			continue
		}
		out[k] = v
	}
	return out
}

// formatText is the AWS CLI's text output (awscli/text.py), item by item.
func formatText(w *bytes.Buffer, item any, identifier string, scalarKeys []string) {
	switch x := item.(type) {
	case map[string]any:
		formatDict(w, x, identifier, scalarKeys)
	case []any:
		formatList(w, x, identifier)
	default:
		w.WriteString(pyStr(x) + "\n")
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func formatList(w *bytes.Buffer, l []any, identifier string) {
	if len(l) == 0 {
		return
	}
	if slices.ContainsFunc(l, func(e any) bool { _, ok := e.(map[string]any); return ok }) {
		keys := map[string]bool{}
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				for k, v := range m {
					if isScalar(v) {
						keys[k] = true
					}
				}
			}
		}
		all := make([]string, 0, len(keys))
		for k := range keys {
			all = append(all, k)
		}
		sort.Strings(all)
		for _, e := range l {
			formatText(w, e, identifier, all)
		}
		return
	}
	var scalars, others []any
	for _, e := range l {
		if isScalar(e) {
			scalars = append(scalars, e)
		} else {
			others = append(others, e)
		}
	}
	if len(scalars) > 0 {
		formatScalars(w, scalars, identifier)
	}
	for _, e := range others {
		formatText(w, e, identifier, nil)
	}
}

func formatScalars(w *bytes.Buffer, l []any, identifier string) {
	if identifier != "" {
		for _, e := range l {
			fmt.Fprintf(w, "%s\t%s\n", strings.ToUpper(identifier), pyStr(e))
		}
		return
	}
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = pyStr(e)
	}
	w.WriteString(strings.Join(s, "\t") + "\n")
}

func formatDict(w *bytes.Buffer, m map[string]any, identifier string, scalarKeys []string) {
	var scalars []string
	type pair struct {
		key   string
		value any
	}
	var others []pair
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if scalarKeys == nil {
		for _, k := range keys {
			if isScalar(m[k]) {
				scalars = append(scalars, pyStr(m[k]))
			} else {
				others = append(others, pair{k, m[k]})
			}
		}
	} else {
		for _, k := range scalarKeys {
			if v, ok := m[k]; ok {
				scalars = append(scalars, pyStr(v))
			} else {
				scalars = append(scalars, "")
			}
		}
		for _, k := range keys {
			if !slices.Contains(scalarKeys, k) {
				others = append(others, pair{k, m[k]})
			}
		}
	}
	if len(scalars) > 0 {
		if identifier != "" {
			scalars = append([]string{strings.ToUpper(identifier)}, scalars...)
		}
		w.WriteString(strings.Join(scalars, "\t") + "\n")
	}
	for _, p := range others {
		formatText(w, p.value, p.key, nil)
	}
}

// pyStr is Python's str() of a JSON value.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case pyFloat:
		return x.String()
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// TestFakeAWSRefusesWhatTheCLIRefuses: the fake refuses the command lines the
// AWS CLI refuses, so that a test passes only with calls the CLI would run.
func TestFakeAWSRefusesWhatTheCLIRefuses(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join(dir, "fixtures.json")
	healthy().write(t, fixtures)
	t.Setenv("FAKE_AWS_FIXTURES", fixtures)
	t.Setenv("FAKE_LOG", "")
	account(t, dir)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lambda", "get-function-concurrency"}, 252, "the following arguments are required: --function-name"},
		{[]string{"lambda", "get-account-settings", "--function-name", "x"}, 252, "Unknown options: --function-name"},
		{[]string{"service-quotas", "get-service-quota", "--service-code", "apigateway"}, 252, "required: --quota-code"},
		{[]string{"lambda", "get-account-settings", "--output", "jsn"}, 252, "argument --output: Invalid choice"},
		{[]string{"lambda", "get-account-settings", "--query", "["}, 252, "Bad value for --query ["},
		{[]string{"logs", "describe-resource-policies", "--policy-scope", "ALL"}, 252, "Invalid choice"},
		// describe-stacks has no page size in its API, so none in the CLI.
		{[]string{"cloudformation", "describe-stacks", "--page-size", "5"}, 252, "Unknown options: --page-size"},
		{[]string{"apigateway", "get-api-keys", "--page-size", "many"}, 252, "invalid int value"},
		{[]string{"lambda", "get-concurrency"}, 252, "Invalid choice"},
		{[]string{"lambda", "get-account-settings", "--query", "AccountLimit.ConcurrentExecutions", "--output", "text"}, 0, "1000\n"},
		{[]string{"lambda", "get-function-concurrency", "--function-name", "f", "--query", "ReservedConcurrentExecutions", "--output", "text"}, 0, "None\n"},
		{[]string{"service-quotas", "get-service-quota", "--service-code", "apigateway", "--quota-code", "L-E8693075", "--query", "Quota.Value", "--output", "text"}, 0, "300.0\n"},
		{[]string{"service-quotas", "get-service-quota", "--service-code", "apigateway", "--quota-code", "L-E8693075", "--query", "Quota.[Value,Adjustable]"}, 0, "[\n    300.0,\n    true\n]\n"},
	} {
		var stdout, stderr strings.Builder
		code := fakeAWS(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String()+stderr.String(), c.want) {
			t.Errorf("aws %s: exit %d, want %d with %q:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, stdout.String(), stderr.String())
		}
	}
	// Text output queries each page, JSON output the pages merged: a count
	// in text is one number a page.
	healthy().with(answers{"apigateway get-api-keys": apiKeys(1234, 0)}).write(t, fixtures)
	for output, want := range map[string]string{"text": "500\n500\n234\n", "json": "1234\n"} {
		var stdout, stderr strings.Builder
		if code := fakeAWS([]string{"apigateway", "get-api-keys", "--query", "length(items)", "--output", output}, &stdout, &stderr); code != 0 || stdout.String() != want {
			t.Errorf("--output %s: exit %d, %q, want %q (%s)", output, code, stdout.String(), want, stderr.String())
		}
	}
}
