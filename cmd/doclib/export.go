package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// export is a command's --json FIELDS and --jq EXPR, as gh has them: --json
// names the fields to print of each item of a list (a JSON array of
// objects), or of the one object a command shows; --jq filters that JSON.
type export struct {
	fields    []string
	jq        string
	timeout   time.Duration // --jq-timeout: how long --jq may run
	maxOutput int           // --jq-max-output: how many MiB --jq may print
	maxMemory int           // --jq-max-memory: how many MiB the heap may grow while --jq runs
	list      bool          // the command prints a list: --json gives an array
	available []string      // the fields --json accepts, sorted
}

// exportHelp is appended to the help of every command with --json.
const exportHelp = `

JSON output: --json FIELDS prints the named fields (comma-separated) %s
as JSON; --json alone lists them. --jq EXPR then filters that JSON with a jq
expression and prints each result, strings without quotes. --jq stops
with exit code 2 when it runs longer than --jq-timeout (default %s),
prints more than --jq-max-output MiB (default %d) or takes more than
--jq-max-memory MiB of memory (default %d); Ctrl-C stops it too. Fields:
  %s`

// The bounds of --jq by default: jq on an API's answer takes milliseconds,
// prints at most about what the API sent and holds a few copies of it, so
// these stop only an expression that loops, recurses or multiplies without
// end (range(infinite), def f: [f]; f) before it fills the disk or the
// memory.
const (
	defaultJQTimeout   = 10 * time.Second
	defaultJQMaxOutput = 64   // MiB
	defaultJQMaxMemory = 1024 // MiB
)

// jqMemoryEvery is how often the heap is measured while --jq runs.
const jqMemoryEvery = 10 * time.Millisecond

// The causes of --jq's context when one of its bounds ends it.
var (
	errJQTimeout = errors.New("--jq-timeout reached")
	errJQMemory  = errors.New("--jq-max-memory reached")
)

// addExport gives cmd --json and --jq. item is the type whose JSON fields
// --json selects (of each element when list), less those named in omit.
func (a *app) addExport(cmd *cobra.Command, item reflect.Type, list bool, omit ...string) *export {
	e := &export{list: list}
	for _, f := range jsonFields(item) {
		if !slices.Contains(omit, f) {
			e.available = append(e.available, f)
		}
	}
	slices.Sort(e.available)
	what := "of the object shown"
	if list {
		what = "of each item, in an array,"
	}
	cmd.Long += fmt.Sprintf(exportHelp, what, defaultJQTimeout, defaultJQMaxOutput, defaultJQMaxMemory, strings.Join(e.available, ", "))
	cmd.Flags().StringSliceVar(&e.fields, "json", nil, "print JSON with the named `FIELDS` (comma-separated; --json alone lists them)")
	cmd.Flags().StringVar(&e.jq, "jq", "", "filter the --json output with a jq `EXPRESSION`, e.g. '.[].id'")
	cmd.Flags().DurationVar(&e.timeout, "jq-timeout", defaultJQTimeout, "stop --jq when it runs longer than this")
	cmd.Flags().IntVar(&e.maxOutput, "jq-max-output", defaultJQMaxOutput, "stop --jq when it prints more than this many `MiB`")
	cmd.Flags().IntVar(&e.maxMemory, "jq-max-memory", defaultJQMaxMemory, "stop --jq when it takes more than this many `MiB` of memory")
	cmd.RegisterFlagCompletionFunc("json", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return e.available, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	})
	if a.exports == nil {
		a.exports = map[*cobra.Command]*export{}
	}
	a.exports[cmd] = e
	return e
}

// on says whether the command prints JSON rather than text.
func (e *export) on() bool { return e != nil && len(e.fields) > 0 }

// check refuses a field the command does not have and --jq without --json,
// before anything is sent.
func (e *export) check() error {
	if e.jq != "" && len(e.fields) == 0 {
		return usageError{errors.New("--jq filters JSON output: name the fields with --json too, e.g. --json id,title --jq '.[].title'")}
	}
	for _, f := range e.fields {
		if !slices.Contains(e.available, f) {
			return usageError{fmt.Errorf("unknown JSON field %q.\n%s", f, e.fieldList())}
		}
	}
	switch {
	case e.timeout <= 0:
		return usageError{fmt.Errorf("--jq-timeout must be positive, e.g. 30s, not %s", e.timeout)}
	case e.maxOutput <= 0:
		return usageError{fmt.Errorf("--jq-max-output is a number of MiB, 1 or more, not %d", e.maxOutput)}
	case e.maxMemory <= 0:
		return usageError{fmt.Errorf("--jq-max-memory is a number of MiB, 1 or more, not %d", e.maxMemory)}
	}
	if e.jq != "" {
		if _, err := e.compile(); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// fieldList is the message that lists the fields: after an unknown one, and
// for --json given without any.
func (e *export) fieldList() string {
	return "Specify one or more comma-separated fields for --json:\n  " + strings.Join(e.available, "\n  ")
}

// noFields turns pflag's "flag needs an argument: --json" into the list of
// fields, as gh does.
func (a *app) noFields(cmd *cobra.Command, err error) error {
	var vr *pflag.ValueRequiredError
	if e := a.exports[cmd]; e != nil && errors.As(err, &vr) && vr.GetFlag() != nil && vr.GetFlag().Name == "json" {
		return usageError{errors.New(e.fieldList())}
	}
	return nil
}

func (e *export) compile() (*gojq.Code, error) {
	q, err := gojq.Parse(e.jq)
	if err != nil {
		return nil, fmt.Errorf("--jq %q is not a jq expression: %v; see https://jqlang.org/manual/ for the syntax", e.jq, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("--jq %q cannot run: %v", e.jq, err)
	}
	return code, nil
}

// write prints v (a slice when the command prints a list) with the
// selected fields, through --jq when given. --jq runs under ctx (Ctrl-C and
// SIGTERM end it) and within --jq-timeout, --jq-max-output and
// --jq-max-memory.
func (e *export) write(ctx context.Context, w io.Writer, v any) error {
	sel, err := e.selected(v)
	if err != nil {
		return fmt.Errorf("encoding the JSON output: %w", err)
	}
	if e.jq == "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, sel, "", "  "); err != nil {
			return fmt.Errorf("encoding the JSON output: %w", err)
		}
		buf.WriteByte('\n')
		_, err := w.Write(buf.Bytes())
		return err
	}
	var data any
	if err := json.Unmarshal(sel, &data); err != nil {
		return fmt.Errorf("encoding the JSON output: %w", err)
	}
	code, err := e.compile()
	if err != nil {
		return usageError{err}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, e.timeout, errJQTimeout)
	defer cancel()
	ctx, stopWatch := watchHeap(ctx, int64(e.maxMemory)<<20)
	defer stopWatch()
	// gojq checks ctx between its instructions, so a value that never
	// comes (def f: [f]; f) ends too, not only a stream of values.
	iter := code.RunWithContext(ctx, data)
	left := int64(e.maxOutput) << 20
	var buf bytes.Buffer
	for {
		if ctx.Err() != nil {
			return e.stopped(ctx)
		}
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := r.(error); isErr {
			if ctx.Err() != nil {
				return e.stopped(ctx)
			}
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return usageError{fmt.Errorf("--jq %q failed on the output: %v", e.jq, err)}
		}
		buf.Reset()
		if s, ok := scalar(r); ok {
			buf.WriteString(s)
			buf.WriteByte('\n')
		} else if err := writeJSON(&buf, r); err != nil {
			return err
		}
		if left -= int64(buf.Len()); left < 0 {
			return usageError{fmt.Errorf("--jq %q printed more than --jq-max-output %d MiB and was stopped: narrow the expression (an endless one such as range(infinite) never stops by itself), "+
				"raise --jq-max-output, or leave out --jq and pipe --json to jq", e.jq, e.maxOutput)}
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
}

// stopped is the error of --jq ended by its context: --jq-timeout,
// --jq-max-memory, or an interruption, which stays context.Canceled for its
// exit code.
func (e *export) stopped(ctx context.Context) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errJQTimeout):
		return usageError{fmt.Errorf("--jq %q ran longer than --jq-timeout %s and was stopped: an expression that loops or recurses without end "+
			"(range(infinite), def f: [f]; f) never finishes; fix it, or give a slow one more time with --jq-timeout", e.jq, e.timeout)}
	case errors.Is(cause, errJQMemory):
		return usageError{fmt.Errorf("--jq %q took more than --jq-max-memory %d MiB and was stopped: an expression that recurses or multiplies without end "+
			"(def f: [f]; f) grows until the memory runs out; fix it, or give a large one more with --jq-max-memory", e.jq, e.maxMemory)}
	}
	return ctx.Err()
}

// watchHeap ends ctx with errJQMemory once the heap's live objects have grown
// by more than limit bytes, measured every jqMemoryEvery; gojq checks its
// context between instructions, so an evaluation that grows stops there. gojq
// has no depth or size limit of its own. Call stop when the evaluation ends.
func watchHeap(ctx context.Context, limit int64) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := heap()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(jqMemoryEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if heap()-base > limit {
					cancel(errJQMemory)
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// selected is v's JSON with only the selected fields, in the order --json
// names them. Values are copied as the API sent them, so content keeps its
// template's order of sections.
func (e *export) selected(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return nil, err
	}
	if !e.list {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			return nil, err
		}
		return e.pick(nil, m), nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &items); err != nil {
		return nil, err
	}
	out := []byte{'['}
	for i, m := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = e.pick(out, m)
	}
	return append(out, ']'), nil
}

// pick appends an object of m's selected fields; a field the API left out
// is null.
func (e *export) pick(out []byte, m map[string]json.RawMessage) []byte {
	out = append(out, '{')
	for i, f := range e.fields {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, f)
		out = append(out, ':')
		if v, ok := m[f]; ok {
			out = append(out, v...)
		} else {
			out = append(out, "null"...)
		}
	}
	return append(out, '}')
}

// scalar is a jq result printed as text, as gh prints it: a string without
// quotes, a number in its shortest form, null as an empty line.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int:
		return strconv.Itoa(v), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64), true
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// writeJSON writes v as one line of JSON without HTML escapes ("Veeam
// Backup & Replication", not \u0026).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding the JSON output: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonFields lists the JSON names of a struct's fields, those of embedded
// structs included.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type)...)
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}
