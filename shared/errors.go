package doclib

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Error codes of the API. Each maps to one HTTP status in Status.
const (
	EBadRequest              = "bad_request"
	EUnauthorised            = "unauthorised"
	EKeyExpired              = "api_key_expired"
	EKeyDeviceRemoved        = "api_key_device_removed"
	EInsufficientCredit      = "insufficient_ai_credit"
	ESubscriptionSuspend     = "subscription_suspended"
	EForbidden               = "forbidden"
	ENotFound                = "not_found"
	EMethodNotAllowed        = "method_not_allowed"
	ERateLimited             = "rate_limited"
	EInternal                = "internal"
	EUnavailable             = "unavailable"
	unavailableClientMessage = "The service is temporarily unavailable. Retry in a few seconds."
	internalClientMessage    = "Internal error. Retry later; if it persists, report the X-Request-Id of this response."
)

// Error is an error a client may see: a code from the list above and a sentence
// that tells what went wrong and, where it can, what to do next.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("doclib error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// unavailableError marks a backend failure that a retry may cure.
type unavailableError struct{ err error }

func (u *unavailableError) Error() string { return "unavailable: " + u.err.Error() }
func (u *unavailableError) Unwrap() error { return u.err }

// Unavailable wraps a backend failure (a throttled or unreachable database) that a
// retry may cure: clients get 503 unavailable with a generic sentence, and err
// itself goes to the log only.
func Unavailable(err error) error { return &unavailableError{err} }

// ErrorCode returns the code of err: an *Error's own, EUnavailable for errors made
// by Unavailable, and EInternal for anything else.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if unavailable(err) {
		return EUnavailable
	}
	return EInternal
}

// ErrorMessage returns the client-safe message of err. The text of any other error
// (a database's, the SDK's) never reaches a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if unavailable(err) {
		return unavailableClientMessage
	}
	return internalClientMessage
}

// unavailable reports whether err is one a retry may cure. A request that ran
// out of its time budget (apigw's deadline before the function's, a backend's
// own timeout) met a slow dependency; a cancelled one was cut short before
// it could finish. Neither is the client's fault nor a bug, and neither's text
// ("context deadline exceeded") is for the client.
func unavailable(err error) bool {
	var u *unavailableError
	return errors.As(err, &u) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// Status maps an error code to its HTTP status.
func Status(code string) int {
	switch code {
	case EBadRequest:
		return http.StatusBadRequest
	case EUnauthorised, EKeyExpired, EKeyDeviceRemoved:
		return http.StatusUnauthorized
	case EInsufficientCredit, ESubscriptionSuspend:
		return http.StatusPaymentRequired
	case EForbidden:
		return http.StatusForbidden
	case ENotFound:
		return http.StatusNotFound
	case EMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case ERateLimited:
		return http.StatusTooManyRequests
	case EUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// ErrNotFound is what stores return for a missing item; the service turns it into
// the client-facing 404 with a message naming the resource.
var ErrNotFound = errors.New("not found")

// quoteLimit is how much of a client's value an error message echoes.
const quoteLimit = 64

// Quote is a client's value as an error message echoes it: quoted, and cut
// to its first 64 characters so that a huge value does not come back whole.
func Quote(v string) string {
	if r := []rune(v); len(r) > quoteLimit {
		return strconv.Quote(string(r[:quoteLimit])+"…") + fmt.Sprintf(" (%d characters)", len(r))
	}
	return strconv.Quote(v)
}
