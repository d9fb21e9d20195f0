package analysis

import (
	"slices"
	"sync"
	"testing"
)

func TestTerms(t *testing.T) {
	a := New()
	cases := []struct {
		in   string
		want []string
	}{
		{"Resetting a user's passwords", []string{"reset", "user", "password"}},
		{"How do I reset my password?", []string{"reset", "password"}},
		{"Café RÉSUMÉ naïve Ångström", []string{"cafe", "resum", "naiv", "angstrom"}},
		{"IT", []string{"it"}}, // only stop words: kept
		{"how to", []string{"how", "to"}},
		{"Okta SSO", []string{"okta", "sso"}},
		{"form 1099-NEC, 2026", []string{"form", "1099", "nec", "2026"}},
		{"Directory > People", []string{"directori", "peopl"}},
		{"  ", nil},
		{"", nil},
	}
	for _, c := range cases {
		if got := a.Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDistinctTerms(t *testing.T) {
	a := New()
	got := a.DistinctTerms("reset passwords: Reset the password, resetting")
	if want := []string{"reset", "password"}; !slices.Equal(got, want) {
		t.Errorf("DistinctTerms = %q, want %q", got, want)
	}
}

func TestTokensKeepWordsAndStops(t *testing.T) {
	got := New().Tokens("The invoices")
	want := []Token{{Word: "the", Term: "the", Stop: true}, {Word: "invoices", Term: "invoic"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{"ABC": "abc", "Crème Brûlée": "creme brulee", "Straße": "straße", "ＡＢＣ": "abc"} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	a := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if got := a.Terms("approving invoices é"); !slices.Equal(got, []string{"approv", "invoic", "e"}) {
					t.Errorf("goroutine %d: %q", i, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
