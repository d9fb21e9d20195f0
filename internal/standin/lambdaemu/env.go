package lambdaemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reserved are the keys Lambda sets itself and refuses in a function's
// Environment.Variables (the developer guide's reserved runtime variables,
// with AWS_DEFAULT_REGION and AWS_LAMBDA_INITIALIZATION_TYPE that it also
// refuses).
var reserved = []string{
	"_HANDLER", "_X_AMZN_TRACE_ID",
	"AWS_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EXECUTION_ENV",
	"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION",
	"AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
	"AWS_LAMBDA_RUNTIME_API", "LAMBDA_RUNTIME_DIR", "LAMBDA_TASK_ROOT", "TZ",
}

// environ is a process's whole environment. Nothing of the test process's
// own comes in but PATH (which the template may replace, as it may on
// Lambda): a function that works here only because the developer's shell
// had AWS_PROFILE or HOME set would fail when deployed.
func (p *Pool) environ(runtimeAPI, tmp string) []string {
	fn := p.fn
	env := map[string]string{"LANG": "en_US.UTF-8"}
	if path, ok := os.LookupEnv("PATH"); ok {
		env["PATH"] = path
	}
	for k, v := range fn.Env {
		env[k] = v
	}
	// Lambda's own values win over the template's, as in Lambda's runtime
	// (whose CreateFunction would have refused them; see Validate). The
	// reserved keys Lambda leaves unset for an OS-only runtime
	// (AWS_EXECUTION_ENV; _X_AMZN_TRACE_ID, which the runtime sets from
	// each event) are not set here either.
	for _, k := range reserved {
		delete(env, k)
	}
	var stream [16]byte
	_, _ = rand.Read(stream[:])
	for k, v := range map[string]string{
		"_HANDLER":                        fn.Handler,
		"AWS_DEFAULT_REGION":              fn.Region,
		"AWS_REGION":                      fn.Region,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(fn.MemoryMB),
		"AWS_LAMBDA_FUNCTION_NAME":        fn.Name,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME":       fn.LogGroup,
		"AWS_LAMBDA_LOG_STREAM_NAME":      time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + hex.EncodeToString(stream[:]),
		"AWS_LAMBDA_RUNTIME_API":          runtimeAPI,
		"LAMBDA_RUNTIME_DIR":              "/var/runtime",
		"LAMBDA_TASK_ROOT":                filepath.Dir(fn.Path),
		"TZ":                              ":UTC",
		// The instance's /tmp (tmp.go); Lambda sets no TMPDIR, its /tmp
		// being where temporary files go by default.
		"TMPDIR": tmp,
	} {
		env[k] = v
	}
	// Set only when the template's LoggingConfig asks for them, as Lambda
	// does; a runtime reads them to choose its log format and level.
	if fn.LogFormat != "" {
		env["AWS_LAMBDA_LOG_FORMAT"] = fn.LogFormat
	}
	if fn.LogLevel != "" {
		env["AWS_LAMBDA_LOG_LEVEL"] = fn.LogLevel
	}
	if fn.Credentials != nil {
		key, secret, token := fn.Credentials()
		env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = key, secret
		if token != "" {
			env["AWS_SESSION_TOKEN"] = token
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// envKey is the pattern Lambda's API holds environment variable keys to.
var envKey = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]+$`)

// Validate reports what Lambda's CreateFunction would refuse in fn: reserved
// or malformed environment variable keys, variables over 4 KB, a timeout
// outside 1–900 s, memory outside 128–10240 MB, ephemeral storage outside
// 512–10240 MB. The stand-in should call it
// so that a template that could not be deployed does not run here; Start
// does not, so that a pool can still be made for one.
func (fn Function) Validate() error {
	var errs []error
	var used, malformed []string
	for k := range fn.Env {
		if slices.Contains(reserved, k) {
			used = append(used, k)
		}
		if !envKey.MatchString(k) {
			malformed = append(malformed, k)
		}
	}
	if len(used) > 0 {
		slices.Sort(used)
		errs = append(errs, fmt.Errorf("InvalidParameterValueException: Lambda was unable to configure your environment variables "+
			"because the environment variables you have provided contains reserved keys that are currently not supported for modification. "+
			"Reserved keys used in this request: %s", strings.Join(used, ", ")))
	}
	if len(malformed) > 0 {
		slices.Sort(malformed)
		errs = append(errs, fmt.Errorf("ValidationException: environment variable keys %s do not match [a-zA-Z]([a-zA-Z0-9_])+",
			strings.Join(malformed, ", ")))
	}
	if b, _ := json.Marshal(fn.Env); len(fn.Env) > 0 && len(b) > 4096 {
		errs = append(errs, fmt.Errorf("InvalidParameterValueException: Lambda was unable to configure your environment variables "+
			"because the environment variables you have provided exceeded the 4KB limit (%d bytes measured)", len(b)))
	}
	if fn.Timeout != 0 && (fn.Timeout < time.Second || fn.Timeout > 900*time.Second) {
		errs = append(errs, fmt.Errorf("ValidationException: timeout %s is outside 1 to 900 seconds", fn.Timeout))
	}
	if fn.MemoryMB != 0 && (fn.MemoryMB < 128 || fn.MemoryMB > 10240) {
		errs = append(errs, fmt.Errorf("ValidationException: memory size %d MB is outside 128 to 10240 MB", fn.MemoryMB))
	}
	if fn.EphemeralMB != 0 && (fn.EphemeralMB < 512 || fn.EphemeralMB > 10240) {
		errs = append(errs, fmt.Errorf("ValidationException: ephemeral storage %d MB is outside 512 to 10240 MB", fn.EphemeralMB))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lambdaemu: function %s: %w", fn.Name, err)
	}
	return nil
}
