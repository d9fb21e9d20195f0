package doclib

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	var u *unavailableError
	if errors.As(err, &u) || errors.Is(err, context.DeadlineExceeded) {
		// A request that ran out of its time budget (apigw's deadline
		// before the function's) met a slow dependency: retrying may pass.
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
	var u *unavailableError
	if errors.As(err, &u) || errors.Is(err, context.DeadlineExceeded) {
		return unavailableClientMessage
	}
	return internalClientMessage
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
