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
	want := Config{Customer: "demo", Search: "domain", OpenSearchSize: "standard", DomainInstanceType: "r7g.large.search", DomainInstanceCount: 2,
		DomainVolumeGB: 100, DomainZones: 2, BedrockModel: "amazon.titan-embed-text-v2:0", EmbedDimensions: 1024, KeyLimit: 100, IPLimit: 300,
		StageRateLimit: 1000, StageBurstLimit: 2000, AuthorizerCacheSeconds: 60, AuthorizerReservedConcurrency: 0, LogRetentionDays: 90, Retain: true, UsagePlans: true, ResponseStreaming: true}
	if c != want {
		t.Fatalf("defaults are %+v, want %+v (update infra/README.md with them)", c, want)
	}
	if c.StackName() != "Doclib-demo" || c.ResourcePrefix() != "doclib-demo" {
		t.Fatalf("names %q %q", c.StackName(), c.ResourcePrefix())
	}
}

func TestParseConfigReadsEveryKey(t *testing.T) {
	c, err := ParseConfig(ctx(map[string]any{
		KeyCustomer: "acme-2", KeySearch: "domain", KeyDomainInstanceType: "m7g.xlarge.search",
		KeyDomainInstanceCount: "4", KeyDomainVolumeGB: float64(200), KeyBedrockModel: "amazon.titan-embed-text-v2:0",
		KeyEmbedDimensions: "512", KeyKeyLimit: " 120 ", KeyIPLimit: float64(600), KeyAuthorizerCacheSeconds: "0",
		KeyLogRetentionDays: "365", KeyAlarmEmail: "ops@example.com", KeyStageRateLimit: "50", KeyStageBurstLimit: float64(80),
		KeyAuthorizerConcurrency: "20", KeyIndexerConcurrency: float64(1), KeyRetain: false, KeyUsagePlans: "false", KeyAccountHelp: " In the Acme app, {action}. ",
		KeyResponseStreaming: "false",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Customer: "acme-2", Search: SearchDomain, OpenSearchSize: "standard", DomainInstanceType: "m7g.xlarge.search", DomainInstanceCount: 4,
		DomainVolumeGB: 200, DomainZones: 2, BedrockModel: "amazon.titan-embed-text-v2:0", EmbedDimensions: 512, KeyLimit: 120, IPLimit: 600,
		AuthorizerCacheSeconds: 0, LogRetentionDays: 365, AlarmEmail: "ops@example.com", StageRateLimit: 50, StageBurstLimit: 80,
		AuthorizerReservedConcurrency: 20, IndexerReservedConcurrency: 1, AccountHelp: "In the Acme app, {action}."}
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
		{KeySearch, "serverless", "_refresh"},
		{KeyKeyLimit, "lots", "not a whole number"},
		{KeyKeyLimit, "0", "from 1"},
		{KeyIPLimit, "100k", "not a whole number"},
		{KeyIPLimit, "5", "from 10"},
		{KeyAuthorizerCacheSeconds, "3601", "3600"},
		{KeyStageRateLimit, "0", "from 1"},
		{KeyStageBurstLimit, "100001", "100000"},
		{KeyAuthorizerConcurrency, "-1", "0 (no reservation)"},
		{KeyIndexerConcurrency, "10001", "0 (no reservation)"},
		{KeyAuthorizerCacheSeconds, true, "not a whole number"},
		{KeyDomainInstanceCount, "3", "multiple of 2"},
		{KeyOpenSearchSize, "huge", "small, standard, large"},
		{KeyRetain, "no", "true or false"},
		{KeyUsagePlans, float64(0), "true or false"},
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
		{KeyAccountHelp, "Ask support.", "{action}"},
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
	// A plan's bucket refills at 2×keyLimit a minute: one request every
	// 30/keyLimit seconds.
	for limit, want := range map[int]int{100: 1, 60: 1, 30: 1, 29: 2, 7: 5, 1: 30, 10000: 1} {
		if got := (Config{KeyLimit: limit}).ThrottleRetryAfter(); got != want {
			t.Errorf("keyLimit %d: Retry-After %d, want %d", limit, got, want)
		}
	}
}

// TestPlanIsABackstop runs the usage plans' token bucket (the plan's rate and
// burst, full at first) over request patterns docs/api.md allows, at most
// keyLimit per fixed minute, and checks that it refuses none of them: the
// function's exact windows answer 429, with the spec's headers, before the
// gateway's bucket ever does.
func TestPlanIsABackstop(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 120, 1000} {
		c := Config{KeyLimit: limit}
		rate, burst := c.PlanRateLimit(), float64(c.PlanBurstLimit())
		if burst < 2*float64(limit) || rate < 2*float64(limit)/60 {
			t.Errorf("keyLimit %d: plan rate %v/s, burst %v: want at least twice the limit", limit, rate, burst)
		}
		const eps = 1e-3
		patterns := map[string]func(w int) []float64{ // request times within window w
			"all at the start": func(w int) []float64 { return repeat(limit, 60*float64(w)) },
			"all at the end":   func(w int) []float64 { return repeat(limit, 60*float64(w+1)-eps) },
			"end, then start": func(w int) []float64 {
				if w%2 == 0 {
					return repeat(limit, 60*float64(w+1)-eps)
				}
				return repeat(limit, 60*float64(w))
			},
			"evenly": func(w int) []float64 {
				ts := make([]float64, limit)
				for i := range ts {
					ts[i] = 60*float64(w) + 60*float64(i)/float64(limit)
				}
				return ts
			},
		}
		for name, at := range patterns {
			tokens, last := burst, 0.0
			for w := 0; w < 20; w++ {
				for _, ts := range at(w) {
					tokens = min(burst, tokens+(ts-last)*rate)
					last = ts
					if tokens < 1-1e-9 {
						t.Fatalf("keyLimit %d, %s: the plan refuses a request at %.3f s in window %d", limit, name, ts, w)
					}
					tokens--
				}
			}
		}
	}
}

func repeat(n int, t float64) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = t
	}
	return ts
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

// TestOpenSearchSizes: each size sets every field of the domain, and the
// Domain* keys override a size's type, count and volume within its zones.
func TestOpenSearchSizes(t *testing.T) {
	for _, tt := range []struct {
		size  string
		want  Config
		other map[string]any
		err   string
	}{
		{size: "small", want: Config{DomainInstanceType: "r7g.medium.search", DomainInstanceCount: 1, DomainZones: 1, DomainVolumeGB: 20}},
		{size: "standard", want: Config{DomainInstanceType: "r7g.large.search", DomainInstanceCount: 2, DomainZones: 2, DomainVolumeGB: 100}},
		{size: "large", want: Config{DomainInstanceType: "r7g.xlarge.search", DomainInstanceCount: 3, DomainZones: 3, DomainVolumeGB: 200,
			DomainMasterType: "m7g.large.search", DomainMasterCount: 3}},
		{size: "large", other: map[string]any{KeyDomainInstanceCount: "6", KeyDomainVolumeGB: "500"},
			want: Config{DomainInstanceType: "r7g.xlarge.search", DomainInstanceCount: 6, DomainZones: 3, DomainVolumeGB: 500,
				DomainMasterType: "m7g.large.search", DomainMasterCount: 3}},
		{size: "small", other: map[string]any{KeyDomainInstanceCount: "3"},
			want: Config{DomainInstanceType: "r7g.medium.search", DomainInstanceCount: 3, DomainZones: 1, DomainVolumeGB: 20}},
		{size: "large", other: map[string]any{KeyDomainInstanceCount: "4"}, err: "multiple of 3"},
	} {
		kv := map[string]any{KeyOpenSearchSize: tt.size}
		for k, v := range tt.other {
			kv[k] = v
		}
		c, err := ParseConfig(ctx(kv))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: %v, want an error with %q", kv, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", kv, err)
		}
		got := Config{DomainInstanceType: c.DomainInstanceType, DomainInstanceCount: c.DomainInstanceCount, DomainZones: c.DomainZones,
			DomainVolumeGB: c.DomainVolumeGB, DomainMasterType: c.DomainMasterType, DomainMasterCount: c.DomainMasterCount}
		if got != tt.want || c.OpenSearchSize != tt.size {
			t.Errorf("%v: %+v, want %+v", kv, got, tt.want)
		}
	}
}

// TestParseConfigEmbedded: search=embedded has no domain, so its sizing
// fields are empty and its keys are refused with the reason; the search
// function's memory is the embedded tier's own key, refused with a domain.
func TestParseConfigEmbedded(t *testing.T) {
	c, err := ParseConfig(ctx(map[string]any{KeySearch: "embedded"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults
	want.Search, want.SearchMemoryMB = SearchEmbedded, DefaultSearchMemoryMB
	want.OpenSearchSize, want.DomainInstanceType, want.DomainInstanceCount, want.DomainVolumeGB, want.DomainZones = "", "", 0, 0, 0
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	if DefaultSearchMemoryMB != 2048 {
		t.Errorf("default search memory %d MB: update infra/README.md", DefaultSearchMemoryMB)
	}
	for _, v := range []any{"3008", float64(1769), " 128 ", "", nil} {
		c, err := ParseConfig(ctx(map[string]any{KeySearch: "embedded", KeySearchMemoryMB: v}))
		if err != nil {
			t.Fatalf("searchMemoryMb=%v: %v", v, err)
		}
		want := map[any]int{"3008": 3008, float64(1769): 1769, " 128 ": 128, "": DefaultSearchMemoryMB, nil: DefaultSearchMemoryMB}[v]
		if c.SearchMemoryMB != want {
			t.Errorf("searchMemoryMb=%v: %d MB, want %d", v, c.SearchMemoryMB, want)
		}
	}
	if c, err := ParseConfig(ctx(map[string]any{KeySearch: "embedded", KeyOpenSearchSize: ""})); err != nil || c.OpenSearchSize != "" {
		t.Errorf("opensearchSize= (empty) with search=embedded: %v, %q; an empty value is no value", err, c.OpenSearchSize)
	}
	for _, tt := range []struct {
		kv   map[string]any
		key  string
		want string
	}{
		{map[string]any{KeySearch: "embedded", KeyOpenSearchSize: "small"}, KeyOpenSearchSize, "no OpenSearch domain"},
		{map[string]any{KeySearch: "embedded", KeyDomainInstanceType: "r7g.large.search"}, KeyDomainInstanceType, "no OpenSearch domain"},
		// refused for the tier, not for the count's own rule
		{map[string]any{KeySearch: "embedded", KeyDomainInstanceCount: "3"}, KeyDomainInstanceCount, "no OpenSearch domain"},
		{map[string]any{KeySearch: "embedded", KeyDomainVolumeGB: float64(50)}, KeyDomainVolumeGB, "no OpenSearch domain"},
		{map[string]any{KeySearch: "embedded", KeySearchMemoryMB: "64"}, KeySearchMemoryMB, "128 to 10240"},
		{map[string]any{KeySearch: "embedded", KeySearchMemoryMB: "10241"}, KeySearchMemoryMB, "128 to 10240"},
		{map[string]any{KeySearch: "embedded", KeySearchMemoryMB: "2GB"}, KeySearchMemoryMB, "not a whole number"},
		{map[string]any{KeySearchMemoryMB: "2048"}, KeySearchMemoryMB, "search=embedded"},
		{map[string]any{KeySearch: "domain", KeySearchMemoryMB: float64(2048)}, KeySearchMemoryMB, "search=embedded"},
		{map[string]any{KeySearch: "elasticsearch"}, KeySearch, `"embedded"`},
	} {
		_, err := ParseConfig(ctx(tt.kv))
		if err == nil || !strings.Contains(err.Error(), "context "+tt.key+"=") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one naming %s and saying %q", tt.kv, err, tt.key, tt.want)
		}
	}
}
