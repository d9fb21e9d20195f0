package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// writeError answers with the error shape. Errors that are not *doclib.Error are
// internal: logged in full, shown to the client as a generic sentence only.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := doclib.ErrorCode(err)
	if code == doclib.EInternal || code == doclib.EUnavailable {
		s.Logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", logPath(r.URL.Path), "error", err)
	}
	writeErrorPlain(w, r, err)
}

// writeErrorPlain writes the error shape without logging.
func writeErrorPlain(w http.ResponseWriter, r *http.Request, err error) {
	code := doclib.ErrorCode(err)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// "<API_KEY>" reads as written, not \u003cAPI_KEY\u003e; a body of strings cannot fail.
	enc.SetEscapeHTML(false)
	_ = enc.Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: doclib.ErrorMessage(err)}})
	body := buf.Bytes()
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	status := doclib.Status(code)
	if status == http.StatusUnauthorized {
		// What a client needs to know to authenticate (RFC 9110, 11.6.1):
		// a bearer key, no OAuth.
		h.Set("WWW-Authenticate", doclib.Challenge(len(r.Header.Values("Authorization")) > 0))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// logLevel is the level of access log lines: failures of the server stand out.
func logLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
}
