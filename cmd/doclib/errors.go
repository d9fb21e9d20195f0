package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/settings"
)

// report writes an error to stderr with what to do next: the API's code,
// message and request ID, the unreachable URL, or the usage mistake.
func (a *app) report(cmd *cobra.Command, err error) {
	var ae *client.Error
	var ne *client.NetworkError
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "doclib: interrupted")
	case errors.As(err, &ae):
		fmt.Fprintf(a.stderr, "doclib: %s: %s\n", ae.Code, ae.Message)
		if ae.RequestID != "" {
			fmt.Fprintf(a.stderr, "request ID: %s (quote it when reporting a problem)\n", ae.RequestID)
		}
		if h := a.hint(cmd, ae); h != "" {
			fmt.Fprintf(a.stderr, "hint: %s\n", h)
		}
	case errors.As(err, &ne):
		where, from := ne.URL, ""
		if a.set != nil {
			where, from = redactURL(a.set.url), a.set.urlFrom
		}
		fmt.Fprintf(a.stderr, "doclib: cannot reach the API at %s: %s\n", where, ne.Reason())
		switch {
		case errors.Is(ne, context.DeadlineExceeded):
			fmt.Fprintf(a.stderr, "hint: each request may take --timeout %s (and is retried --retries %d times); give a slow API more, e.g. --timeout 2m, or check the network\n", a.timeout, a.retries)
		case strings.TrimSuffix(where, "/") == defaultURL:
			fmt.Fprintln(a.stderr, "hint: that is the local server's address; start it with: go run ./cmd/doclib-server (or point --url or "+settings.EnvURL+" at another API)")
		default:
			fmt.Fprintf(a.stderr, "hint: check the URL (from %s) and the network; --timeout and --retries give a slow API more time\n", from)
		}
	case exitCode(err) == exitUsage:
		fmt.Fprintf(a.stderr, "doclib: %v\n", err)
		fmt.Fprintf(a.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	default:
		fmt.Fprintf(a.stderr, "doclib: %v\n", err)
	}
}

// hint says what to do about an API error.
func (a *app) hint(cmd *cobra.Command, e *client.Error) string {
	keyFrom := settings.EnvAPIKey
	if a.set != nil {
		keyFrom = a.set.keyFrom
	}
	switch e.Code {
	case "unauthorised":
		return fmt.Sprintf("the API key from %s was not accepted: make sure it holds a whole, current key for this API (--api-key-file beats %s, which beats the config file). The local server prints its demo keys when it starts.", keyFrom, settings.EnvAPIKey)
	case "api_key_expired":
		return fmt.Sprintf("the API key from %s has expired: create a new key and put it there.", keyFrom)
	case "api_key_device_removed":
		return fmt.Sprintf("the device that created the API key from %s was removed or archived: create a new key and put it there.", keyFrom)
	case "not_found":
		switch cmd.Name() {
		case "document", "traverse", "recordings":
			return "check the document ID: it starts with doc_ (slugs do not work for documents). `doclib documents LIBRARY` lists a library's documents and `doclib search WORDS` finds one. A document outside the key's libraries is not found either."
		case "libraries", "search", "mcp":
			if cmd.Name() != "search" || !cmd.Flags().Changed("library") {
				// These paths exist on every doclib API: the base URL is wrong.
				urlFrom := settings.EnvURL
				if a.set != nil {
					urlFrom = a.set.urlFrom
				}
				return fmt.Sprintf("the API does not know this path, which every doclib API serves: check that the URL (from %s) is the API's base URL, such as http://127.0.0.1:8080 or a deployment's ApiUrl.", urlFrom)
			}
			return "check --library with `doclib libraries`: it takes a lib_… ID or a slug; a library outside the key's scope is not found either."
		}
		return "check the library ID with `doclib libraries` (an ID such as lib_… or a slug); a library outside the key's scope is not found either."
	case "forbidden":
		return "this API key has no recording-details access; use a key that has it to read recordings."
	case "insufficient_ai_credit":
		return "search spends AI credit and the workspace has none left: add credit, or bring your own AI provider key. `doclib documents LIBRARY --search TEXT` matches words without credit."
	case "subscription_suspended":
		return "the workspace's subscription is suspended, so search cannot run: renew it. `doclib documents LIBRARY --search TEXT` still matches words."
	case "rate_limited":
		wait := "a minute"
		if e.RetryAfter > 0 {
			wait = e.RetryAfter.String()
		}
		return fmt.Sprintf("too many requests for now: wait %s and try again. doclib waits and retries by itself (--retries) when the wait is at most a minute.", wait)
	case "bad_request":
		return fmt.Sprintf("see `%s --help` for the values the API accepts.", cmd.CommandPath())
	}
	if e.Status >= 500 {
		return "the API failed; try again later, quoting the request ID if it keeps failing."
	}
	return ""
}

// flagError words pflag's refusal of a flag's value in the user's terms:
// "--depth takes a whole number such as 2, not "two"" rather than
// strconv's "parsing "two": invalid syntax".
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) || iv.GetFlag() == nil {
		return err
	}
	name := iv.GetFlag().Name
	switch iv.GetFlag().Value.Type() {
	case "int":
		return fmt.Errorf("--%s takes a whole number such as 2, not %q", name, iv.GetValue())
	case "duration":
		return fmt.Errorf("--%s takes a duration such as 30s or 2m, not %q", name, iv.GetValue())
	case "bool":
		return fmt.Errorf("--%s is true or false (or given alone), not %q", name, iv.GetValue())
	}
	return fmt.Errorf("--%s cannot be %q; see --help for its values", name, iv.GetValue())
}
