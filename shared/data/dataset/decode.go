package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The data-set file is read with JSON v2 (github.com/go-json-experiment/json,
// docs/dependencies.md), which is strict where the format is (docs/dataset.md: bad
// input always gets a clear error): field names match exactly, a name given
// twice, invalid UTF-8 and a lone surrogate are errors, and every error carries
// its byte offset and JSON pointer. The file is read as a stream: the top level
// token by token, each item as one value decoded straight into its typed form,
// so a 300 MB file is never held whole in memory.
//
// What is left here is the format's own: which arrays there are, the item each
// problem belongs to, the wording of messages, and the line and column of an
// offset (input, below).

type decoder struct {
	in  *input
	dec *jsontext.Decoder
	v   *validator
	// shift turns the decoder's offsets into the file's: the byte order mark
	// it is not given, or what restart gave it.
	shift int64
	seen  []string // the top-level names read, the current one last

	probs []string // problems of the item being read, named when it ends

	// Where the decoder is, for messages that end decoding.
	arrName   string     // the top-level array being read
	index     int        // the index of the item being read or last read; -1 before the first
	itemStart int64      // the file offset where the item being read starts
	cur       identified // the item being read, as far as it was decoded; nil between items
}

// decodeFile reads the whole file into f, recording the problems of items in v.
// It returns the problem that ended decoding, if one did.
func decodeFile(r io.Reader, v *validator, f *File) (fatal string) {
	in := &input{r: r}
	if msg := in.open(); msg != "" {
		return msg
	}
	d := &decoder{in: in, dec: jsontext.NewDecoder(in), v: v, shift: in.skip}
	if d.dec.PeekKind() != '{' {
		_, err := d.dec.ReadToken()
		switch {
		case err == io.EOF:
			return "the file is empty; it must hold one JSON object such as {\"workspaces\": [...], \"documents\": [...]}"
		case in.err != nil:
			return d.fatal(err)
		case err != nil && in.at(in.skipSpace(d.shift)) == '/':
			// Only a file whose first byte is a slash starts with a comment:
			// what follows a complete first value depends on how much of
			// the file was read, and a message must not.
			return "the file is not a data-set JSON object: it starts with a comment, and JSON has none"
		}
		return "the file is not a data-set JSON object: " + errNotObject.Error()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fatal(err)
	}
	for d.dec.PeekKind() != '}' {
		tok, err := d.dec.ReadToken()
		if err != nil {
			return d.fatal(err)
		}
		name := tok.String()
		d.seen = append(d.seen, name)
		switch name {
		case "workspaces":
			fatal = decodeArray(d, name, &f.Workspaces)
		case "devices":
			fatal = decodeArray(d, name, &f.Devices)
		case "apiKeys":
			fatal = decodeArray(d, name, &f.APIKeys)
		case "libraries":
			fatal = decodeArray(d, name, &f.Libraries)
		case "documents":
			fatal = decodeArray(d, name, &f.Documents)
		case "edges":
			fatal = decodeArray(d, name, &f.Edges)
		case "recordings":
			fatal = decodeArray(d, name, &f.Recordings)
		default:
			v.addTop("the top level has an " + unknownField(name, fileFields))
			fatal = d.fatal(d.skip())
		}
		if fatal != "" {
			return fatal
		}
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fatal(err)
	}
	// Where the object ends: the data after it starts at the first byte that
	// is not white space, as read from the file (what the decoder has
	// buffered past it depends on the reads).
	end := d.shift + d.dec.InputOffset()
	if _, err := d.dec.ReadToken(); err != io.EOF {
		if in.err != nil {
			return d.fatal(err)
		}
		return "the file has data after its JSON object, at " + in.position(in.skipSpace(end)) + "; it must hold exactly one object"
	}
	return ""
}

// itemOptions: a field that is not in the format is refused, not dropped.
var itemOptions = json.RejectUnknownMembers(true)

// decodeArray reads one top-level array item by item. A problem inside an item
// is that item's, named with its array, index and ID, and reading goes on; a
// syntax error ends it.
func decodeArray[T any, P interface {
	*T
	identified
}](d *decoder, name string, out *[]T) (fatal string) {
	switch d.dec.PeekKind() {
	case '[':
	case 'n': // "documents": null is an empty array
		_, err := d.dec.ReadToken()
		return d.fatal(err)
	case '{':
		d.v.addTop(fmt.Sprintf("%q must be an array of objects, not a JSON object", name))
		return d.fatal(d.skip())
	default:
		raw, err := d.dec.ReadValue()
		if err != nil {
			return d.fatal(err)
		}
		d.v.addTop(fmt.Sprintf("%q must be an array of objects, not %s", name, kind(raw)))
		return ""
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fatal(err)
	}
	d.arrName, d.index = name, -1
	for i := 0; d.dec.PeekKind() != ']'; i++ {
		k := d.dec.PeekKind()
		if k == 0 { // between items: a missing comma, a trailing one, the end
			_, err := d.dec.ReadToken()
			return d.fatal(err)
		}
		var item T
		d.index, d.itemStart, d.cur = i, d.next(" \t\r\n,"), P(&item)
		d.in.forget(d.itemStart) // no message can point before the item now
		d.probs = d.probs[:0]
		if k != '{' {
			raw, err := d.dec.ReadValue()
			if err != nil {
				return d.fatal(err)
			}
			d.wrongType("", raw, "an object")
		} else if err := json.UnmarshalDecode(d.dec, &item, itemOptions); err != nil {
			var se *json.SemanticError
			if !errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || d.in.err != nil {
				return d.fatal(err)
			}
			// A field or type the format does not have. Read the item again to
			// find all its problems, not only the first.
			d.restart()
			raw, err := d.dec.ReadValue()
			if err != nil {
				return d.fatal(err)
			}
			item = *new(T)
			d.explain(raw, reflect.ValueOf(&item).Elem())
			if len(d.probs) == 0 {
				d.problem("%s", se.Error()) // a problem explain does not word
			}
		}
		id := P(&item).shownID()
		for _, p := range d.probs {
			d.v.add(itemName(name, i, id), "%s", p)
		}
		*out = append(*out, item)
		d.cur = nil
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fatal(err)
	}
	d.arrName = ""
	return ""
}

// skip reads a value token by token, letting go of what it read: the value of
// an unknown top-level field may be as large as the file.
func (d *decoder) skip() error {
	depth := d.dec.StackDepth()
	for {
		d.in.forget(d.shift + d.dec.InputOffset())
		if _, err := d.dec.ReadToken(); err != nil {
			return err
		}
		if d.dec.StackDepth() == depth {
			return nil
		}
	}
}

// restart goes on with a new decoder from the start of the item being read:
// after a semantic error a jsontext.Decoder cannot read the rest of the value
// it was in. The new one is first given the top level read so far, the values
// left out, so that it knows where it is and which names were given.
func (d *decoder) restart() {
	prefix := []byte{'{'}
	for _, name := range d.seen[:len(d.seen)-1] {
		prefix, _ = jsontext.AppendQuote(prefix, name)
		prefix = append(prefix, ":null,"...)
	}
	prefix, _ = jsontext.AppendQuote(prefix, d.arrName)
	prefix = append(prefix, ":["...)
	d.in.replay(d.itemStart, prefix)
	d.shift = d.itemStart - int64(len(prefix))
	d.dec = jsontext.NewDecoder(d.in)
	for range 2*len(d.seen) + 1 { // '{', the names and nulls, the array's name, '['
		d.dec.ReadToken()
	}
}

// explain reads an item that did not decode, into v as far as it can, recording
// each of its problems with its path (e.g. "schema.sections[1].type"). raw is
// valid JSON: what is wrong is the fields and types.
func (d *decoder) explain(raw jsontext.Value, v reflect.Value) {
	d.walk(jsontext.NewDecoder(bytes.NewReader(raw)), v, "")
}

func (d *decoder) walk(dec *jsontext.Decoder, v reflect.Value, path string) {
	t := v.Type()
	isStruct := t.Kind() == reflect.Struct
	isList := t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
	switch k := dec.PeekKind(); {
	case k == 'n' && (isStruct || isList):
		dec.ReadToken()
	case isStruct && k == '{':
		dec.ReadToken()
		names := jsonNames(t)
		for dec.PeekKind() != '}' {
			tok, _ := dec.ReadToken()
			name := tok.String()
			if i := slices.Index(names, name); i >= 0 {
				d.walk(dec, v.Field(i), join(path, name))
				continue
			}
			d.problem("%s", inPath(path, unknownField(name, names)))
			dec.SkipValue()
		}
		dec.ReadToken()
	case isList && k == '[':
		dec.ReadToken()
		v.Set(reflect.MakeSlice(t, 0, 0))
		for i := 0; dec.PeekKind() != ']'; i++ {
			v.Set(reflect.Append(v, reflect.Zero(t.Elem())))
			d.walk(dec, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		dec.ReadToken()
	default: // a string, number, bool, list of strings or content, or a wrong type
		raw, _ := dec.ReadValue()
		if isStruct || isList {
			d.wrongType(path, raw, want(t))
			return
		}
		var se *json.SemanticError
		if err := json.Unmarshal(raw, v.Addr().Interface()); errors.As(err, &se) {
			d.semantic(path, raw, se)
		} else if err != nil {
			d.problem("%s", inPath(path, err.Error()))
		}
	}
}

// semantic words an error of decoding raw, the value at path.
func (d *decoder) semantic(path string, raw jsontext.Value, se *json.SemanticError) {
	for tok := range se.JSONPointer.Tokens() { // inside raw: an element of a list, a part of content
		path = join(path, tok)
	}
	if se.ByteOffset > 0 && se.ByteOffset < int64(len(raw)) {
		raw, _ = jsontext.NewDecoder(bytes.NewReader(raw[se.ByteOffset:])).ReadValue()
	}
	isInt := se.GoType != nil && (se.GoType.Kind() == reflect.Int || se.GoType.Kind() == reflect.Int64)
	switch {
	case raw.Kind() == '0' && errors.Is(se.Err, strconv.ErrRange) && isInt:
		most := uint64(1)<<(se.GoType.Bits()-1) - 1
		d.problem("field %q is %s, out of range (whole numbers are at most %d)", path, clip(string(raw)), most)
	case raw.Kind() == '0' && errors.Is(se.Err, strconv.ErrRange):
		d.problem("field %q is %s, out of range for a number", path, clip(string(raw)))
	case se.GoType != nil:
		d.wrongType(path, raw, want(se.GoType))
	default:
		d.problem("%s", inPath(path, se.Error()))
	}
}

// want names what a value of type t is in JSON.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	}
	return "an object"
}

// kind describes a value for a message, e.g. `a JSON number 7`.
func kind(raw jsontext.Value) string {
	switch raw.Kind() {
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case '"':
		s, _ := jsontext.AppendUnquote(nil, raw)
		return "a JSON string " + clipQuote(string(s))
	case '0':
		return "a JSON number " + clip(string(raw))
	}
	return string(raw) // true, false or null
}

// wrongType records a value that is not of the kind wanted.
func (d *decoder) wrongType(path string, raw jsontext.Value, want string) {
	if path != "" {
		d.problem("field %q has the wrong type (%s where %s was expected)", path, kind(raw), want)
	} else {
		d.problem("%s where %s was expected", kind(raw), want)
	}
}

// problem records a problem of the item being read.
func (d *decoder) problem(format string, args ...any) {
	d.probs = append(d.probs, fmt.Sprintf(format, args...))
}

// join extends a path, e.g. "schema" with "sections" and "1" to "schema.sections[1]".
func join(path, tok string) string {
	if _, err := strconv.Atoi(tok); err == nil {
		return path + "[" + tok + "]"
	}
	if path == "" {
		return tok
	}
	return path + "." + tok
}

func joinAll(toks []string) (path string) {
	for _, tok := range toks {
		path = join(path, tok)
	}
	return path
}

// inPath prefixes msg with the path of the object it is about, if any.
func inPath(path, msg string) string {
	if path != "" {
		return path + ": " + msg
	}
	return msg
}

// unknownField words an unknown field's problem, with the right spelling when
// only the case differs.
func unknownField(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return fmt.Sprintf("unknown field %s; field names are case-sensitive: did you mean %q?", clipQuote(key), n)
		}
	}
	return fmt.Sprintf("unknown field %s; remove it or check its spelling against the fields %s", clipQuote(key), strings.Join(names, ", "))
}

// jsonNames lists the JSON names of a struct type's fields, from their tags.
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

var fileFields = jsonNames(reflect.TypeFor[File]())

// next is the file offset of the first byte after the last token read that is
// not in skip (white space, and a comma between items).
func (d *decoder) next(skip string) int64 {
	rest := d.dec.UnreadBuffer()
	n := len(rest) - len(bytes.TrimLeft(rest, skip))
	return d.shift + d.dec.InputOffset() + int64(n)
}

// fatal words the error that ends decoding, naming what was being read.
func (d *decoder) fatal(err error) string {
	if err == nil {
		return ""
	}
	msg := d.describe(err)
	where := ""
	switch {
	case d.cur != nil:
		where = itemName(d.arrName, d.index, d.cur.shownID())
	case d.arrName != "" && d.index >= 0:
		where = fmt.Sprintf("%s, after %s[%d]", d.arrName, d.arrName, d.index)
	case d.arrName != "":
		where = d.arrName
	}
	if where != "" {
		return where + ": " + msg
	}
	return msg
}

// describe words a decoding error.
func (d *decoder) describe(err error) string {
	in := d.in
	var se *jsontext.SyntacticError
	switch {
	case in.err != nil:
		return fmt.Sprintf("the file could not be read: %v", in.err)
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		return "the file ends too early, at " + in.position(in.end()) + "; is it complete?"
	case !errors.As(err, &se):
		return err.Error()
	}
	at := d.shift + se.ByteOffset
	// The path inside the item (jsontext's pointer less "/documents/3"), or
	// from the top level between items.
	var toks []string
	for tok := range se.JSONPointer.Tokens() {
		toks = append(toks, tok)
	}
	if d.arrName != "" {
		toks = toks[min(2, len(toks)):]
	}
	path := joinAll(toks)
	syntax := func(format string, args ...any) string {
		return "invalid JSON at " + in.position(at) + ": " + fmt.Sprintf(format, args...)
	}
	c, text := in.at(at), se.Err.Error()
	// After a value, a comma and then ']' is a trailing comma: jsontext points at
	// the comma, the message at what follows it.
	if c == ',' && strings.Contains(text, "at start of value") && !strings.ContainsRune(":[{,", rune(in.at(in.prevNonSpace(at)))) {
		if n := in.skipSpace(at + 1); in.at(n) == ']' || in.at(n) == '}' {
			at, c = n, in.at(n)
		}
	}
	switch {
	case se.Err == jsontext.ErrDuplicateName && d.arrName == "" && len(toks) == 1:
		return fmt.Sprintf("the array %s is given twice; give each array once", clipQuote(path))
	case se.Err == jsontext.ErrDuplicateName && d.arrName == "documents" && len(toks) == 2 && toks[0] == "content":
		return fmt.Sprintf("content has section %s twice; give each section once", clipQuote(toks[1]))
	case se.Err == jsontext.ErrDuplicateName && len(toks) > 0:
		msg := fmt.Sprintf("field %s is given twice; give each field once", clipQuote(toks[len(toks)-1]))
		return inPath(joinAll(toks[:len(toks)-1]), msg)
	case text == "exceeded max depth":
		return syntax("values are nested more than 10000 levels deep")
	case text == "invalid UTF-8":
		return fmt.Sprintf("%s is not valid UTF-8 (the byte 0x%02x at %s); save the file as UTF-8", field(path), c, in.position(at))
	case c == '\\' && strings.Contains(text, "in string"): // an escape
		return escape(in.tail(at), at, path, in)
	case (c == ']' || c == '}') && in.at(in.prevNonSpace(at)) == ',':
		what := map[int]string{']': "element", '}': "field"}[c]
		return syntax("%s after a comma; remove the comma after the last %s", describeByte(c), what)
	case se.Err == jsontext.ErrNonStringName:
		return syntax("%s where a field name (a string in double quotes) was expected", describeByte(c))
	case strings.Contains(text, "after object name"):
		return syntax("%s after the field name %s; a colon is missing", describeByte(c), clipQuote(in.stringBefore(at, se.JSONPointer.LastToken())))
	}
	for _, h := range syntaxHints {
		if strings.Contains(text, h.lib) {
			return syntax("%s %s", describeByte(c), h.ours)
		}
	}
	if _, lit, ok := strings.Cut(text, "in literal "); ok {
		lit, _, _ = strings.Cut(lit, " ")
		return syntax("%s in what begins like %s", describeByte(c), lit)
	}
	return syntax("%s", strings.TrimPrefix(text, "jsontext: "))
}

// syntaxHints reword jsontext's syntax errors ("invalid character 'N' at start
// of value") for someone who edits the file by hand.
var syntaxHints = []struct{ lib, ours string }{
	{"after object value", "after a field's value; a comma or '}' is missing"},
	{"after array element", "after an array element; a comma or ']' is missing"},
	{"at start of value", "where a value was expected; values are strings in double quotes, numbers, objects, arrays, true, false or null"},
	{"at start of string", "where a field name (a string in double quotes) was expected"},
	{"in number", "in a number where a digit was expected"},
	{"in string (expecting non-control character)", "inside a string; write control characters as escapes such as \\n"},
}

// escape words an error at the backslash that starts b, at offset at.
func escape(b []byte, at int64, path string, in *input) string {
	if len(b) >= 2 && b[1] != 'u' {
		return "invalid JSON at " + in.position(at+1) + ": " + describeByte(int(b[1])) +
			" after a backslash in a string; the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"
	}
	for i := 2; i < 6 && i < len(b); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(b[i])) {
			return "invalid JSON at " + in.position(at+int64(i)) + ": " + describeByte(int(b[i])) + " in a \\u escape; it takes four hex digits"
		}
	}
	return fmt.Sprintf("%s holds %s at %s, half of a UTF-16 surrogate pair, which is not a character", field(path), b[:min(6, len(b))], in.position(at))
}

// field names the value at path in a message.
func field(path string) string {
	if path == "" {
		return "a field name"
	}
	return fmt.Sprintf("field %q", path)
}

func describeByte(c int) string {
	switch {
	case c < 0:
		return "the end of the file"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("the character %q", rune(c))
	}
	return fmt.Sprintf("the byte 0x%02x", c)
}

// input passes the file to the JSON decoder and keeps what the decoder may
// still report an error in: the bytes from the start of the item being read on.
// It counts the lines and columns of the bytes it lets go, so that a message
// can give the line and column of any offset without reading the file again.
type input struct {
	r    io.Reader
	err  error  // a read error other than io.EOF
	kept []byte // input from offset base on; kept[:start] is counted already
	base int64
	// start is where counting has got to; lines and col describe it: the
	// newlines before it, and the characters between the last of them and it.
	start, lines, col int
	sent              int    // kept[sent:] is not passed to the decoder yet
	skip              int64  // the byte order mark the decoder is not given
	pending           []byte // passed to the decoder before kept[sent:]
}

// open reads the first bytes, skips a UTF-8 byte order mark and refuses
// UTF-16, which editors on Windows may save.
func (in *input) open() string {
	buf := make([]byte, 4)
	for len(in.kept) < 4 && in.err == nil {
		n, err := in.r.Read(buf[:4-len(in.kept)])
		in.kept = append(in.kept, buf[:n]...)
		if err == io.EOF {
			break
		}
		in.err = err
	}
	b := in.kept
	switch {
	case in.err != nil:
		return fmt.Sprintf("the file could not be read: %v", in.err)
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		in.sent, in.skip = 3, 3
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}), bytes.HasPrefix(b, []byte{0xff, 0xfe}),
		len(b) >= 2 && (b[0] == 0 || b[1] == 0):
		return "the file is not UTF-8 (it looks like UTF-16); save it as UTF-8"
	}
	return ""
}

func (in *input) Read(p []byte) (int, error) {
	if len(in.pending) > 0 {
		n := copy(p, in.pending)
		in.pending = in.pending[n:]
		return n, nil
	}
	if in.sent < len(in.kept) {
		n := copy(p, in.kept[in.sent:])
		in.sent += n
		return n, nil
	}
	n, err := in.r.Read(p)
	in.kept = append(in.kept, p[:n]...)
	in.sent = len(in.kept)
	if err != nil && err != io.EOF {
		in.err = err
	}
	return n, err
}

// replay passes prefix and then the input again from offset off on.
func (in *input) replay(off int64, prefix []byte) {
	in.pending, in.sent = prefix, in.index(off)
}

// forget lets go of the bytes before offset off, counting them.
func (in *input) forget(off int64) {
	i := int(off - in.base)
	if i <= in.start {
		return
	}
	b := in.kept[in.start:i]
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		in.lines += n
		in.col = chars(b[bytes.LastIndexByte(b, '\n')+1:])
	} else {
		in.col += chars(b)
	}
	in.start = i
	if in.start > len(in.kept)/2 { // move the rest down only once it is the smaller part
		n := copy(in.kept, in.kept[in.start:])
		in.kept, in.base, in.sent, in.start = in.kept[:n], in.base+int64(in.start), in.sent-in.start, 0
	}
}

// end is the offset of the end of what was read.
func (in *input) end() int64 { return in.base + int64(len(in.kept)) }

// index is the index in kept of offset off, within what is kept.
func (in *input) index(off int64) int {
	return min(max(int(off-in.base), in.start), len(in.kept))
}

// at is the byte at offset off, or -1 past the end.
func (in *input) at(off int64) int {
	if i := in.index(off); i < len(in.kept) {
		return int(in.kept[i])
	}
	return -1
}

// tail is what was read from offset off on.
func (in *input) tail(off int64) []byte { return in.kept[in.index(off):] }

// skipSpace is the offset of the first byte from off on that is not white space.
func (in *input) skipSpace(off int64) int64 {
	b := in.tail(off)
	return in.end() - int64(len(bytes.TrimLeft(b, " \t\r\n")))
}

// prevNonSpace is the offset of the last byte before off that is not white space.
func (in *input) prevNonSpace(off int64) int64 {
	b := in.kept[in.start:in.index(off)]
	return in.base + int64(in.start+len(bytes.TrimRight(b, " \t\r\n"))) - 1
}

// stringBefore is the JSON string that ends just before offset off (white
// space aside), as read from the file, or fallback when there is none. The
// name an error's JSON pointer ends with is not always the name just read,
// depending on how far the decoder had buffered; the file's bytes are.
func (in *input) stringBefore(off int64, fallback string) string {
	end := in.prevNonSpace(off)
	b := in.kept[in.start:in.index(end)]
	if in.at(end) != '"' {
		return fallback
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '"' {
			continue
		}
		slashes := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 1 {
			continue // an escaped quote inside the string
		}
		var name string
		if err := json.Unmarshal(append(append([]byte{}, b[i:]...), '"'), &name); err != nil {
			return fallback
		}
		return name
	}
	return fallback
}

// position describes offset off as "line L, column C (byte offset B)"; line and
// column count from 1, columns in characters.
func (in *input) position(off int64) string {
	b := in.kept[in.start:in.index(off)]
	line, col := in.lines+1+bytes.Count(b, []byte{'\n'}), 0
	if j := bytes.LastIndexByte(b, '\n'); j >= 0 {
		col = chars(b[j+1:]) + 1
	} else {
		col = in.col + chars(b) + 1
	}
	return fmt.Sprintf("line %d, column %d (byte offset %d)", line, col, off)
}

// chars counts the characters of UTF-8 text: the bytes that are not
// continuation bytes (10xxxxxx), eight at a time. A large set is written on one
// line, so this runs over every byte.
func chars(b []byte) int {
	const high = 0x8080808080808080
	n, cont := len(b), 0
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		cont += bits.OnesCount64(w & ^(w << 1) & high) // bit 7 set, bit 6 clear
		b = b[8:]
	}
	for _, c := range b {
		if c&0xc0 == 0x80 {
			cont++
		}
	}
	return n - cont
}
