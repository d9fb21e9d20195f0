package apisuite

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
)

// needIPBudget skips t when the client's address may not have n requests
// left in the window: the per-IP limit would answer before what t checks.
func (s *suite) needIPBudget(t *testing.T, n int) {
	t.Helper()
	if used := s.ipUsed(); used+n > s.IPLimit {
		t.Skipf("needs %d requests, but %d of the per-IP limit of %d may be used in this window; raise Target.IPLimit on the target or run this check alone", n, used, s.IPLimit)
	}
}

// quota reads a key's remaining quota and its window's reset from a cheap
// request.
func (s *suite) quota(t *testing.T, key *dataset.APIKey) (remaining int, reset int64) {
	t.Helper()
	r := s.get(t, key, "/libraries")
	if r.status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	return s.checkQuotaHeaders(t, r, s.KeyLimit)
}

// testCreditExhaustion spends the rest of a metered workspace's AI credit with
// concurrent searches: exactly the credit left succeeds (spending is atomic),
// then search answers 402 insufficient_ai_credit and the rest still works.
func (s *suite) testCreditExhaustion(t *testing.T) {
	if !s.SpendCredit {
		t.Skip("Target.SpendCredit is off")
	}
	key := s.m.individual
	s.mu.Lock()
	left := int(s.m.workspaces[key.WorkspaceID].AICredit) - s.spent[key.WorkspaceID]
	s.mu.Unlock()
	const extra = 4
	remaining, _ := s.quota(t, key)
	if remaining < left+extra+1 {
		t.Skipf("%s has %d credit left, more than the %d requests its key may still send in this window (Target.KeyLimit %d)",
			key.WorkspaceID, left, remaining, s.KeyLimit)
	}
	s.needIPBudget(t, left+extra+1)
	results := make([]*response, left+extra)
	errs := make([]error, len(results))
	concurrently(len(results), 8, func(i int) {
		results[i], errs[i] = s.send(http.MethodGet, "Bearer "+key.Secret, "/search/documents"+q("q", "invoice "+strconv.Itoa(i), "pageSize", "1"))
	})
	okCount, noCredit := 0, 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("search %d: %v", i, errs[i])
		}
		s.checkCommon(t, r, true)
		switch {
		case r.status == http.StatusOK:
			okCount++
		case r.status == http.StatusPaymentRequired && errorCode(r) == "insufficient_ai_credit":
			noCredit++
		default:
			t.Errorf("%s: want 200 or 402 insufficient_ai_credit", r)
		}
	}
	if okCount != left || noCredit != extra {
		t.Errorf("%d concurrent searches with %d credit left: %d answered, %d refused with 402; want %d and %d",
			len(results), left, okCount, noCredit, left, extra)
	}
	s.expectError(t, s.get(t, key, "/search/documents"+q("q", "reset password")), http.StatusPaymentRequired, "insufficient_ai_credit")
	if r := s.get(t, key, "/libraries"); r.status != http.StatusOK {
		t.Errorf("%s: want 200: without credit only search is refused", r)
	}
}

// testKeyRateLimit uses up a key's quota with concurrent requests: exactly the
// quota left succeeds, with every remaining count from the one left down to 0
// given once, and the rest answer 429 rate_limited with Retry-After and the
// X-RateLimit-* headers. The key of the suspended workspace is used: the other
// subtests send it only a few requests.
func (s *suite) testKeyRateLimit(t *testing.T) {
	key := s.m.suspended
	const extra = 3
	for attempt := 1; ; attempt++ {
		remaining, reset := s.quota(t, key)
		s.needIPBudget(t, remaining+1)
		results := make([]*response, remaining+extra)
		errs := make([]error, len(results))
		concurrently(len(results), 8, func(i int) {
			results[i], errs[i] = s.send(http.MethodGet, "Bearer "+key.Secret, "/libraries")
		})
		rolled := false
		var got []int
		var limited []*response
		for i, r := range results {
			if errs[i] != nil {
				t.Fatalf("request %d: %v", i, errs[i])
			}
			if r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(reset, 10) {
				rolled = true // a new window began during the burst
			}
			switch r.status {
			case http.StatusOK:
				rem, _ := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
				got = append(got, rem)
			case http.StatusTooManyRequests:
				limited = append(limited, r)
			default:
				t.Errorf("%s: want 200 or 429", r)
			}
		}
		if rolled && attempt == 1 {
			t.Logf("a new rate-limit window began during the burst; once more")
			continue
		}
		var want []int
		for i := range remaining {
			want = append(want, i)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || len(limited) != extra {
			t.Errorf("%d concurrent requests with %d left: %d succeeded with X-RateLimit-Remaining %v, %d refused; want exactly %d to succeed, with remaining %v, and %d refused",
				len(results), remaining, len(got), got, len(limited), remaining, want, extra)
		}
		for _, r := range limited {
			s.checkRateLimited(t, r, s.KeyLimit)
		}
		break
	}
	// The key limit comes before billing and before routing.
	s.checkRateLimited(t, s.get(t, key, "/search/documents"+q("q", "reset password")), s.KeyLimit)
	// (Behind API Gateway the gateway answers the unknown path itself.)
	if r := s.get(t, key, "/nope"); !(r.gateway && r.status == http.StatusForbidden) && !r.unrouted {
		s.checkRateLimited(t, r, s.KeyLimit)
	}
	// Another key keeps its own quota.
	if r := s.get(t, s.m.ownProvider, "/libraries"); r.status != http.StatusOK {
		t.Errorf("%s: another key is not limited by this one's use; want 200", r)
	}
}

// checkRateLimited checks a 429: rate_limited in the error shape, Retry-After
// in whole seconds (at least 1, at most a window, agreeing with the reset), and
// the X-RateLimit-* headers with nothing remaining. limit 0 skips the check of
// X-RateLimit-Limit.
func (s *suite) checkRateLimited(t testing.TB, r *response, limit int) {
	t.Helper()
	if r.status != http.StatusTooManyRequests || errorCode(r) != "rate_limited" {
		t.Errorf("%s: want 429 rate_limited", r)
		return
	}
	checkErrorShape(t, r)
	if r.header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id", r)
	}
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || retry < 1 || time.Duration(retry)*time.Second > s.Window+time.Second {
		t.Errorf("%s: Retry-After %q, want whole seconds from 1 to the window's %s", r, r.header.Get("Retry-After"), s.Window)
	}
	remaining, reset := s.checkQuotaHeaders(t, r, limit)
	if remaining != 0 {
		t.Errorf("%s: X-RateLimit-Remaining %d, want 0", r, remaining)
	}
	if err == nil && reset > 0 {
		until := time.Until(time.Unix(reset, 0)).Seconds()
		if math.Abs(float64(retry)-until) > 3 && !(retry == 1 && until < 1) {
			t.Errorf("%s: Retry-After %d, but X-RateLimit-Reset is %.0f s away", r, retry, until)
		}
	}
}

// testIPRateLimit sends requests without a key until the per-IP limit
// answers: the limit comes before authentication, so guessing keys is
// throttled too. It leaves the client's address refused until the window ends.
func (s *suite) testIPRateLimit(t *testing.T) {
	if !s.CheckIPLimit {
		t.Skip("Target.CheckIPLimit is off")
	}
	window := time.Now().Truncate(s.Window)
	sent := 0
	var limited *response
	for limited == nil {
		if w := time.Now().Truncate(s.Window); !w.Equal(window) {
			window, sent = w, 0 // a new window began (windows are aligned to the epoch)
		}
		if sent > s.IPLimit {
			t.Fatalf("%d requests from one address in a window without a 429; the per-IP limit is %d", sent, s.IPLimit)
		}
		r, err := s.send(http.MethodGet, "Bearer dlk_demo_guess_"+strconv.Itoa(sent), "/libraries")
		if err != nil {
			t.Fatal(err)
		}
		sent++
		switch {
		case r.status == http.StatusTooManyRequests:
			limited = r
		case r.status != http.StatusUnauthorized:
			t.Fatalf("%s: want 401 until the per-IP limit, then 429", r)
		}
	}
	s.checkRateLimited(t, limited, 0)
	// A good key from the same address is refused too.
	r, err := s.send(http.MethodGet, "Bearer "+s.m.full.Secret, "/libraries")
	if err != nil {
		t.Fatal(err)
	}
	s.checkRateLimited(t, r, 0)
}
