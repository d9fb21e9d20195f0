package restapi

import (
	"math"
	"slices"
	"time"
)

// bucket is a token bucket: API Gateway's throttling algorithm.
type bucket struct {
	tokens float64
	last   time.Time
}

// take spends a token of the bucket named key with throttle t; a zero
// throttle is no limit.
func (g *Gateway) take(key string, t Throttle) bool {
	if t.Rate <= 0 && t.Burst <= 0 {
		return true
	}
	now := g.opts.Now()
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	b := g.st.buckets[key]
	if b == nil {
		b = &bucket{tokens: float64(t.Burst), last: now}
		g.st.buckets[key] = b
	}
	b.tokens = math.Min(float64(t.Burst), b.tokens+now.Sub(b.last).Seconds()*t.Rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// methodThrottle is the throttle of the method declared as declared on the
// resource at path: the most specific of the stage's MethodSettings that
// names it (a setting for the method itself over one for all methods).
func (g *Gateway) methodThrottle(path, declared string) Throttle {
	var t Throttle
	best := -1
	for _, ms := range g.api.MethodSettings {
		score := 0
		switch {
		case ms.ResourcePath == path:
			score += 2
		case ms.ResourcePath != "/*":
			continue
		}
		switch {
		case ms.HTTPMethod == declared:
			score++
		case ms.HTTPMethod != "*":
			continue
		}
		if score > best {
			t, best = ms.Throttle, score
		}
	}
	return t
}

// quota counts a key's requests in the current period of its plan.
type quota struct {
	period time.Time
	used   int
}

func periodStart(now time.Time, period string) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch period {
	case "WEEK":
		return day.AddDate(0, 0, -int(day.Weekday()))
	case "MONTH":
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// meter checks the API key of a method that requires one and applies its
// usage plan: the key must exist, be enabled and be in a usage plan of the
// stage; then the plan's quota and throttle apply to it.
func (g *Gateway) meter(c *call, value string) (string, bool) {
	if value == "" || g.keys == nil {
		c.errMessage = "Forbidden"
		return "INVALID_API_KEY", false
	}
	k, ok := g.keys.LookupKey(value)
	if !ok || !k.Enabled {
		c.errMessage = "Forbidden"
		return "INVALID_API_KEY", false
	}
	var plan *UsagePlan
	for i := range g.api.UsagePlans {
		p := &g.api.UsagePlans[i]
		if slices.Contains(p.Stages, g.api.Stage) && slices.Contains(k.UsagePlans, p.ID) {
			plan = p
			break
		}
	}
	if plan == nil {
		c.errMessage = "Forbidden"
		return "INVALID_API_KEY", false
	}
	c.apiKeyID = k.ID
	name := plan.ID + "/" + k.ID
	if plan.Quota.Limit > 0 {
		start := periodStart(g.opts.Now(), plan.Quota.Period)
		g.st.mu.Lock()
		q := g.st.quotas[name]
		if q == nil || !q.period.Equal(start) {
			q = &quota{period: start}
			g.st.quotas[name] = q
		}
		over := q.used >= plan.Quota.Limit
		if !over {
			q.used++
		}
		g.st.mu.Unlock()
		if over {
			c.errMessage = "Limit Exceeded"
			return "QUOTA_EXCEEDED", false
		}
	}
	if !g.take(name, plan.Throttle) {
		c.errMessage = "Too Many Requests"
		return "THROTTLED", false
	}
	return "", true
}

// wafBlocks applies the web ACL's rate-based rules: a client IP that sent
// more than a rule's Limit requests in its Window is blocked until its
// count falls back under the limit. (WAF itself counts with some delay;
// the stand-in counts exactly.)
func (g *Gateway) wafBlocks(c *call) (string, bool) {
	if len(g.api.WAF) == 0 {
		return "", false
	}
	now := g.opts.Now()
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	for _, rule := range g.api.WAF {
		key := rule.Name + "/" + c.sourceIP
		times := g.st.waf[key]
		cut := 0
		for cut < len(times) && now.Sub(times[cut]) >= rule.Window {
			cut++
		}
		times = append(times[cut:], now)
		g.st.waf[key] = times
		if len(times) > rule.Limit {
			return rule.Name, true
		}
	}
	return "", false
}
