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

// The WWW-Authenticate challenges of a 401 (RFC 6750, section 3): every 401
// carries one, as HTTP requires, so that a client such as an MCP client
// learns that this API takes a bearer API key and offers no OAuth. They
// name no resource_metadata (RFC 9728): doclib publishes no OAuth metadata,
// and MCP's authorization specification asks such metadata to name an
// authorization server, which doclib has none of. The values are fixed
// text, the same locally and behind API Gateway, whose gateway responses
// can carry only fixed header values for them; the body says which refusal
// it was. No double quote or backslash may appear in the description.
const (
	// ChallengeMissingKey answers a request without credentials: RFC 6750
	// asks for no error code then.
	ChallengeMissingKey = `Bearer realm="doclib"`
	// ChallengeRefusedKey answers a request whose Authorization header was
	// refused.
	ChallengeRefusedKey = `Bearer realm="doclib", error="invalid_token", error_description="` + refusedKeyDescription + `"`

	refusedKeyDescription = "The API key was refused (the body says why). This API takes a doclib API key as Authorization: Bearer <API_KEY>; it uses no OAuth."
)

// Challenge is the WWW-Authenticate value of a 401 answered to a request
// that sent an Authorization header (sent) or none.
func Challenge(sent bool) string {
	if sent {
		return ChallengeRefusedKey
	}
	return ChallengeMissingKey
}
