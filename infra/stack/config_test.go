package stack

import (
	"strings"
	"testing"
)

func ctx(kv map[string]any) func(string) any {
	return func(k string) any { return kv[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(ctx(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c != Defaults {
		t.Fatalf("no context gave %+v, want the defaults %+v", c, Defaults)
	}
	want := Config{Customer: "demo", Search: "domain", DomainInstanceType: "r7g.large.search", DomainInstanceCount: 2,
		DomainVolumeGB: 100, BedrockModel: "amazon.titan-embed-text-v2:0", EmbedDimensions: 1024, KeyLimit: 100, IPLimit: 300,
		AuthorizerCacheSeconds: 60, LogRetentionDays: 90}
	if c != want {
		t.Fatalf("defaults are %+v, want %+v (update infra/README.md with them)", c, want)
	}
	if c.StackName() != "Doclib-demo" || c.ResourcePrefix() != "doclib-demo" {
		t.Fatalf("names %q %q", c.StackName(), c.ResourcePrefix())
	}
}

func TestParseConfigReadsEveryKey(t *testing.T) {
	c, err := ParseConfig(ctx(map[string]any{
		KeyCustomer: "acme-2", KeySearch: "serverless", KeyDomainInstanceType: "m7g.xlarge.search",
		KeyDomainInstanceCount: "4", KeyDomainVolumeGB: float64(200), KeyBedrockModel: "amazon.titan-embed-text-v2:0",
		KeyEmbedDimensions: "512", KeyKeyLimit: " 120 ", KeyIPLimit: float64(600), KeyAuthorizerCacheSeconds: "0",
		KeyLogRetentionDays: "365", KeyAlarmEmail: "ops@example.com",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Customer: "acme-2", Search: SearchServerless, DomainInstanceType: "m7g.xlarge.search", DomainInstanceCount: 4,
		DomainVolumeGB: 200, BedrockModel: "amazon.titan-embed-text-v2:0", EmbedDimensions: 512, KeyLimit: 120, IPLimit: 600,
		AuthorizerCacheSeconds: 0, LogRetentionDays: 365, AlarmEmail: "ops@example.com"}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	if c.ThrottleRetryAfter() != 1 {
		t.Fatalf("Retry-After for 120/min: %d", c.ThrottleRetryAfter())
	}
}

func TestParseConfigEmptyKeepsDefault(t *testing.T) {
	c, err := ParseConfig(ctx(map[string]any{KeyCustomer: "", KeyKeyLimit: "", KeySearch: " "}))
	if err != nil {
		t.Fatal(err)
	}
	if c != Defaults {
		t.Fatalf("got %+v", c)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		key  string
		val  any
		want string // in the error, beside the key
	}{
		{KeyEmbedDimensions, "300", "256, 512 or 1024"},
		{KeyEmbedDimensions, "1024.5", "not a whole number"},
		{KeyEmbedDimensions, float64(768), "256, 512 or 1024"},
		{KeySearch, "elasticsearch", `"domain"`},
		{KeyKeyLimit, "lots", "not a whole number"},
		{KeyKeyLimit, "0", "from 1"},
		{KeyIPLimit, "100k", "not a whole number"},
		{KeyIPLimit, "5", "from 10"},
		{KeyAuthorizerCacheSeconds, "3601", "3600"},
		{KeyAuthorizerCacheSeconds, true, "not a whole number"},
		{KeyDomainInstanceCount, "3", "even"},
		{KeyDomainInstanceCount, "two", "not a whole number"},
		{KeyDomainVolumeGB, "5", "from 10"},
		{KeyDomainInstanceType, "r7g.large", "instance type"},
		{KeyCustomer, "Acme", "lower-case"},
		{KeyCustomer, "acme_corp", "lower-case"},
		{KeyCustomer, strings.Repeat("a", 22), "1 to 21"},
		{KeyCustomer, float64(7), "not a string"},
		{KeyBedrockModel, "amazon.*", "foundation model ID"},
		{KeyLogRetentionDays, "10", "CloudWatch Logs accepts"},
		{KeyAlarmEmail, "ops", "e-mail"},
	}
	for _, c := range cases {
		_, err := ParseConfig(ctx(map[string]any{c.key: c.val}))
		if err == nil {
			t.Errorf("%s=%v: no error", c.key, c.val)
			continue
		}
		if !strings.Contains(err.Error(), "context "+c.key+"=") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%v: error %q should name the key and say %q", c.key, c.val, err, c.want)
		}
	}
}

func TestThrottleRetryAfter(t *testing.T) {
	for limit, want := range map[int]int{100: 1, 60: 1, 59: 2, 30: 2, 7: 9, 1: 60, 10000: 1} {
		if got := (Config{KeyLimit: limit}).ThrottleRetryAfter(); got != want {
			t.Errorf("keyLimit %d: Retry-After %d, want %d", limit, got, want)
		}
	}
}

func TestEveryRetentionHasACDKValue(t *testing.T) {
	for _, d := range retentionDays {
		if _, ok := retentions[d]; !ok {
			t.Errorf("retention %d days has no awslogs.RetentionDays", d)
		}
	}
	if len(retentions) != len(retentionDays) {
		t.Errorf("%d CDK retentions for %d accepted values", len(retentions), len(retentionDays))
	}
}
