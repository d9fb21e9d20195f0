package doclib

import "time"

// The rules of an API key that both places which authenticate a request apply:
// the service when it looks the key up, and the API Gateway edge when it trusts
// the authorizer's cached answer. One statement of each keeps the two from
// drifting apart in what a client sees.

// MissingKeyError is the refusal of a request that carries no API key.
func MissingKeyError() *Error {
	return Errorf(EUnauthorised, "Missing API key. Send it in the Authorization header as \"Bearer <API_KEY>\".")
}

// CheckKeyExpiry returns the EKeyExpired refusal when a key that expires at
// expiresAt no longer works at now, and nil when it does or never expires (a zero
// expiresAt). A key stops working at the instant it expires; help says who
// gives a new one.
func CheckKeyExpiry(expiresAt, now time.Time, help AccountHelp) error {
	if expiresAt.IsZero() || now.Before(expiresAt) {
		return nil
	}
	return Errorf(EKeyExpired, "The API key expired at %s. %s", expiresAt.UTC().Format(time.RFC3339), help.Ask("create a new API key"))
}
