package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The data-set file is read by its own small JSON decoder rather than
// encoding/json, which matches field names case-insensitively, keeps the last of
// two equal keys, turns invalid UTF-8 and lone surrogates into U+FFFD, and gives
// syntax-error offsets relative to what one Decode call read. This one is strict
// where the format is (decisions.md: bad input always gets a clear error), knows
// the line and column of every byte, and reads the file as a stream in one pass,
// straight into the typed items, so a 300 MB file is never held whole in memory.

// maxDepth bounds nesting, so that a file of a million '[' cannot exhaust the stack.
const maxDepth = 1000

// fatalError ends decoding: the file's structure cannot be read any further.
type fatalError struct{ msg string }

// pathElem is one step of the path to the value being read: a field name, or an
// array index when name is empty.
type pathElem struct {
	name  string
	index int
}

type decoder struct {
	r        io.Reader
	buf      []byte // buf[:end] holds input; buf[pos:end] is not read yet
	pos, end int
	mark     int   // buf[mark:] survives fill (the start of the string being read); -1 when none
	off      int64 // offset of buf[0] in the input
	lines    int   // newlines before buf[0]
	col      int   // characters between the last of those newlines and buf[0]
	eof      bool
	depth    int
	scratch  []byte // a string with escapes, decoded

	path  []pathElem
	probs []string // problems of the item being read, named when it ends

	// Where the decoder is, for messages that end decoding.
	arrName string     // the top-level array being read
	index   int        // the index of the item being read or last read; -1 before the first
	cur     identified // the item being read; nil between items
}

func newDecoder(r io.Reader) *decoder {
	return &decoder{r: r, buf: make([]byte, 1<<20), mark: -1}
}

// fill reads more input, keeping the unread bytes and buf[mark:]. It returns how
// far the kept bytes moved towards the start of buf, and false at the end of input.
func (d *decoder) fill() (shift int, ok bool) {
	if d.eof {
		return 0, false
	}
	keep := d.pos
	if d.mark >= 0 && d.mark < keep {
		keep = d.mark
	}
	if keep > 0 {
		d.account(d.buf[:keep])
		d.end = copy(d.buf, d.buf[keep:d.end])
		d.off += int64(keep)
		d.pos -= keep
		if d.mark >= 0 {
			d.mark -= keep
		}
		shift = keep
	}
	if d.end == len(d.buf) { // one string fills the buffer
		d.buf = append(d.buf, make([]byte, len(d.buf))...)
	}
	for {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err == io.EOF {
			d.eof = true
			return shift, n > 0
		}
		if err != nil {
			panic(&fatalError{fmt.Sprintf("the file could not be read: %v", err)})
		}
		if n > 0 {
			return shift, true
		}
	}
}

// account counts the lines and columns of bytes that are about to leave buf.
// A large set is written on one line, so this runs over every byte: it uses the
// word-at-a-time counts below rather than utf8.RuneCount.
func (d *decoder) account(b []byte) {
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		d.lines += n
		d.col = chars(b[bytes.LastIndexByte(b, '\n')+1:])
	} else {
		d.col += chars(b)
	}
}

// chars counts the characters of UTF-8 text: the bytes that are not
// continuation bytes (10xxxxxx), eight at a time.
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

// position describes buf[i] as "line L, column C (byte offset B)", all three
// counted over the whole input; line and column count from 1, columns in
// characters.
func (d *decoder) position(i int) string {
	line, col := d.lines+1+bytes.Count(d.buf[:i], []byte{'\n'}), 0
	if j := bytes.LastIndexByte(d.buf[:i], '\n'); j >= 0 {
		col = chars(d.buf[j+1:i]) + 1
	} else {
		col = d.col + chars(d.buf[:i]) + 1
	}
	return fmt.Sprintf("line %d, column %d (byte offset %d)", line, col, d.off+int64(i))
}

// where names what was being read: the item, or the array between items.
func (d *decoder) where() string {
	switch {
	case d.cur != nil:
		return itemName(d.arrName, d.index, d.cur.shownID())
	case d.arrName != "" && d.index >= 0:
		return fmt.Sprintf("%s, after %s[%d]", d.arrName, d.arrName, d.index)
	case d.arrName != "":
		return d.arrName
	}
	return ""
}

func (d *decoder) fatal(msg string) {
	if w := d.where(); w != "" {
		msg = w + ": " + msg
	}
	panic(&fatalError{msg})
}

// syntax ends decoding with a syntax error at buf[i].
func (d *decoder) syntax(i int, format string, args ...any) {
	d.fatal("invalid JSON at " + d.position(i) + ": " + fmt.Sprintf(format, args...))
}

func (d *decoder) unexpectedEOF() {
	d.fatal("the file ends too early, at " + d.position(d.end) + "; is it complete?")
}

// peek returns the next byte that is not white space without reading it, or -1
// at the end of input.
func (d *decoder) peek() int {
	for {
		for d.pos < d.end {
			switch c := d.buf[d.pos]; c {
			case ' ', '\n', '\r', '\t':
				d.pos++
			default:
				return int(c)
			}
		}
		if _, ok := d.fill(); !ok {
			return -1
		}
	}
}

// ensure makes buf[i:i+n] available if the input has that much, and returns
// how far fill moved the buffer (indices into it move by as much); buf[i:] must
// be kept by fill (i >= pos, or i >= mark).
func (d *decoder) ensure(i, n int) (shift int, ok bool) {
	for i-shift+n > d.end {
		s, more := d.fill()
		shift += s
		if !more {
			return shift, false
		}
	}
	return shift, true
}

// need is ensure that ends decoding at the end of input.
func (d *decoder) need(i, n int) (shift int) {
	shift, ok := d.ensure(i, n)
	if !ok {
		d.unexpectedEOF()
	}
	return shift
}

func describe(c int) string {
	switch {
	case c < 0:
		return "the end of the file"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("the character %q", rune(c))
	}
	return fmt.Sprintf("the byte 0x%02x", c)
}

// problem records a problem of the item being read.
func (d *decoder) problem(format string, args ...any) {
	d.probs = append(d.probs, fmt.Sprintf(format, args...))
}

// pathString is the path of the value being read, e.g. "schema.sections[1].type".
func (d *decoder) pathString() string {
	var b strings.Builder
	for _, p := range d.path {
		if p.name == "" {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.name)
	}
	return b.String()
}

// inPath prefixes msg with the path of the object being read, if any.
func (d *decoder) inPath(msg string) string {
	if p := d.pathString(); p != "" {
		return p + ": " + msg
	}
	return msg
}

func (d *decoder) push(name string, index int) {
	d.path = append(d.path, pathElem{name, index})
}

func (d *decoder) pop() { d.path = d.path[:len(d.path)-1] }

func (d *decoder) enter() {
	d.depth++
	if d.depth > maxDepth {
		d.syntax(d.pos, "values are nested more than %d levels deep", maxDepth)
	}
}

// strSpecial marks the bytes that end the fast scan of a string.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads a string and returns its decoded bytes, valid until the next read.
// With report, invalid UTF-8 and lone surrogates are problems of the value at
// the current path.
func (d *decoder) str(report bool) []byte {
	d.pos++ // the opening quote
	d.mark = d.pos
	i := d.pos
	escaped := false
	bad := false // a problem was reported: one per string is enough
	d.scratch = d.scratch[:0]
	for {
		for i < d.end && !strSpecial[d.buf[i]] {
			i++
		}
		if i == d.end {
			shift, ok := d.fill()
			i -= shift
			if !ok {
				d.unexpectedEOF()
			}
			continue
		}
		switch c := d.buf[i]; {
		case c == '"':
			out := d.buf[d.mark:i]
			if escaped {
				d.scratch = append(d.scratch, out...)
				out = d.scratch
			}
			d.pos, d.mark = i+1, -1
			return out
		case c == '\\':
			d.scratch = append(d.scratch, d.buf[d.mark:i]...)
			escaped = true
			i = d.escape(i, report && !bad, &bad)
			d.mark = i
		case c < 0x20:
			d.syntax(i, "%s inside a string; write control characters as escapes such as \\n", describe(int(c)))
		default:
			for !utf8.FullRune(d.buf[i:d.end]) && !d.eof {
				shift, _ := d.fill()
				i -= shift
			}
			r, size := utf8.DecodeRune(d.buf[i:d.end])
			if r == utf8.RuneError && size == 1 && report && !bad {
				bad = true
				d.problem("field %q is not valid UTF-8 (the byte 0x%02x at %s); save the file as UTF-8", d.pathString(), c, d.position(i))
			}
			i += size
		}
	}
}

// escape decodes the escape at buf[i] into scratch and returns the index after it.
func (d *decoder) escape(i int, report bool, bad *bool) int {
	i -= d.need(i, 2)
	switch c := d.buf[i+1]; c {
	case '"', '\\', '/':
		d.scratch = append(d.scratch, c)
	case 'b':
		d.scratch = append(d.scratch, '\b')
	case 'f':
		d.scratch = append(d.scratch, '\f')
	case 'n':
		d.scratch = append(d.scratch, '\n')
	case 'r':
		d.scratch = append(d.scratch, '\r')
	case 't':
		d.scratch = append(d.scratch, '\t')
	case 'u':
		i -= d.need(i, 6)
		r := d.hex4(i)
		next := i + 6
		if utf16.IsSurrogate(r) {
			if r < 0xdc00 { // a first half: is the second next?
				shift, ok := d.ensure(next, 6)
				i, next = i-shift, next-shift
				if ok && d.buf[next] == '\\' && d.buf[next+1] == 'u' {
					if r2 := d.hex4(next); r2 >= 0xdc00 && r2 <= 0xdfff {
						r = utf16.DecodeRune(r, r2)
						next += 6
					}
				}
			}
			if utf16.IsSurrogate(r) {
				if report {
					*bad = true
					d.problem("field %q holds \\u%04x at %s, half of a UTF-16 surrogate pair, which is not a character", d.pathString(), r, d.position(i))
				}
				r = utf8.RuneError
			}
		}
		d.scratch = utf8.AppendRune(d.scratch, r)
		return next
	default:
		d.syntax(i+1, "%s after a backslash in a string; the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX", describe(int(c)))
	}
	return i + 2
}

// hex4 reads the four hex digits of the \u escape at buf[i].
func (d *decoder) hex4(i int) rune {
	var r rune
	for j := i + 2; j < i+6; j++ {
		c := d.buf[j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			d.syntax(j, "%s in a \\u escape; it takes four hex digits", describe(int(c)))
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number reads a number and returns its text, valid until the next read.
func (d *decoder) number() []byte {
	d.mark = d.pos
	i := d.pos
	at := func() int { // the byte at i, or -1 at the end of input
		for i >= d.end {
			shift, ok := d.fill()
			i -= shift
			if !ok {
				return -1
			}
		}
		return int(d.buf[i])
	}
	digits := func() {
		if c := at(); c < '0' || c > '9' {
			d.syntax(i, "%s in a number where a digit was expected", describe(c))
		}
		for c := at(); c >= '0' && c <= '9'; c = at() {
			i++
		}
	}
	if at() == '-' {
		i++
	}
	if at() == '0' {
		i++
	} else {
		digits()
	}
	if at() == '.' {
		i++
		digits()
	}
	if c := at(); c == 'e' || c == 'E' {
		i++
		if c := at(); c == '+' || c == '-' {
			i++
		}
		digits()
	}
	out := d.buf[d.mark:i]
	d.pos, d.mark = i, -1
	return out
}

// literal reads true, false or null.
func (d *decoder) literal(word string) {
	i := d.pos
	for j := range len(word) {
		for i+j >= d.end {
			shift, ok := d.fill()
			i -= shift
			if !ok {
				d.unexpectedEOF()
			}
		}
		if d.buf[i+j] != word[j] {
			if j == 0 {
				d.syntax(i, "%s where a value was expected; values are strings in double quotes, numbers, objects, arrays, true, false or null", describe(int(d.buf[i])))
			}
			d.syntax(i+j, "%s in what begins like %s", describe(int(d.buf[i+j])), word)
		}
	}
	d.pos = i + len(word)
}

// object reads an object, calling field with each key (valid until the next
// read); field reads the value.
func (d *decoder) object(field func(key []byte)) {
	d.enter()
	d.pos++ // '{'
	c := d.peek()
	if c == '}' {
		d.pos++
		d.depth--
		return
	}
	for {
		if c != '"' {
			if c == -1 {
				d.unexpectedEOF()
			}
			if c == '}' {
				d.syntax(d.pos, "%s after a comma; remove the comma after the last field", describe(c))
			}
			d.syntax(d.pos, "%s where a field name (a string in double quotes) was expected", describe(c))
		}
		key := d.str(false)
		if d.pos < d.end && d.buf[d.pos] == ':' { // the usual case, and key stays valid
			d.pos++
		} else {
			k := string(key) // peek may read, and key would change under it
			if c := d.peek(); c != ':' {
				if c == -1 {
					d.unexpectedEOF()
				}
				d.syntax(d.pos, "%s after the field name %s; a colon is missing", describe(c), clipQuote(k))
			}
			d.pos++
			key = []byte(k)
		}
		field(key)
		switch c = d.peek(); c {
		case ',':
			d.pos++
			c = d.peek()
		case '}':
			d.pos++
			d.depth--
			return
		case -1:
			d.unexpectedEOF()
		default:
			d.syntax(d.pos, "%s after a field's value; a comma or '}' is missing", describe(c))
		}
	}
}

// array reads an array, calling elem for each element; elem reads it.
func (d *decoder) array(elem func(i int)) {
	d.enter()
	d.pos++ // '['
	c := d.peek()
	if c == ']' {
		d.pos++
		d.depth--
		return
	}
	for i := 0; ; i++ {
		switch c {
		case -1:
			d.unexpectedEOF()
		case ']':
			d.syntax(d.pos, "%s after a comma; remove the comma after the last element", describe(c))
		}
		elem(i)
		switch c = d.peek(); c {
		case ',':
			d.pos++
			c = d.peek()
		case ']':
			d.pos++
			d.depth--
			return
		case -1:
			d.unexpectedEOF()
		default:
			d.syntax(d.pos, "%s after an array element; a comma or ']' is missing", describe(c))
		}
	}
}

// skip reads a value of any kind and drops it.
func (d *decoder) skip() {
	switch c := d.peek(); c {
	case '{':
		d.object(func([]byte) { d.skip() })
	case '[':
		d.array(func(int) { d.skip() })
	case '"':
		d.str(false)
	case 't':
		d.literal("true")
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	case -1:
		d.unexpectedEOF()
	default:
		if c == '-' || c >= '0' && c <= '9' {
			d.number()
			return
		}
		d.syntax(d.pos, "%s where a value was expected; values are strings in double quotes, numbers, objects, arrays, true, false or null", describe(c))
	}
}

// kind reads a value and describes it for a message, e.g. `a JSON number 7`.
func (d *decoder) kind() string {
	switch c := d.peek(); {
	case c == '{':
		d.skip()
		return "a JSON object"
	case c == '[':
		d.skip()
		return "a JSON array"
	case c == '"':
		return "a JSON string " + clipQuote(string(d.str(false)))
	case c == '-' || c >= '0' && c <= '9':
		return "a JSON number " + clip(string(d.number()))
	case c == 't':
		d.literal("true")
		return "true"
	case c == 'f':
		d.literal("false")
		return "false"
	case c == 'n':
		d.literal("null")
		return "null"
	}
	d.skip() // ends decoding with the right message
	return ""
}

// wrongType reads a value that is not of the kind wanted and records it.
func (d *decoder) wrongType(want string) {
	got := d.kind()
	if p := d.pathString(); p != "" {
		d.problem("field %q has the wrong type (%s where %s was expected)", p, got, want)
	} else {
		d.problem("%s where %s was expected", got, want)
	}
}

// fields reads an object whose field names are names, exactly: a name in
// another case, a name given twice and an unknown name are problems. set reads
// the value of the named field.
func (d *decoder) fields(names []string, set func(name string)) {
	var seen uint64
	d.object(func(key []byte) {
		for i, n := range names {
			if string(key) != n {
				continue
			}
			if seen&(1<<i) != 0 {
				d.problem("%s", d.inPath(fmt.Sprintf("field %q is given twice; give each field once", n)))
				d.skip()
				return
			}
			seen |= 1 << i
			d.push(n, 0)
			set(n)
			d.pop()
			return
		}
		d.problem("%s", d.inPath(unknownField(string(key), names)))
		d.skip()
	})
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

func (d *decoder) string(p *string) {
	switch d.peek() {
	case '"':
		*p = string(d.str(true))
	case 'n':
		d.literal("null")
	default:
		d.wrongType("a string")
	}
}

func (d *decoder) strings(p *[]string) {
	switch d.peek() {
	case '[':
		out := make([]string, 0, 4)
		d.array(func(i int) {
			d.push("", i)
			if d.peek() == '"' {
				out = append(out, string(d.str(true)))
			} else {
				d.wrongType("a string")
			}
			d.pop()
		})
		*p = out
	case 'n':
		d.literal("null")
		*p = nil
	default:
		d.wrongType("an array of strings")
	}
}

func (d *decoder) bool(p *bool) {
	switch d.peek() {
	case 't':
		d.literal("true")
		*p = true
	case 'f':
		d.literal("false")
		*p = false
	case 'n':
		d.literal("null")
	default:
		d.wrongType("true or false")
	}
}

func (d *decoder) int(p *int) {
	var n int64
	if !d.int64(&n) {
		return
	}
	if n > math.MaxInt || n < math.MinInt { // only where int has 32 bits
		d.problem("field %q is %d, out of range (whole numbers are at most %d)", d.pathString(), n, math.MaxInt)
		return
	}
	*p = int(n)
}

// int64 reads a whole number; it returns false when there was none.
func (d *decoder) int64(p *int64) bool {
	c := d.peek()
	if c == 'n' {
		d.literal("null")
		return false
	}
	if c != '-' && (c < '0' || c > '9') {
		d.wrongType("a whole number")
		return false
	}
	text := d.number()
	n, err := parseInt(text)
	if err == nil {
		*p = n
		return true
	}
	if bytes.ContainsAny(text, ".eE") {
		d.problem("field %q has the wrong type (a JSON number %s where a whole number was expected)", d.pathString(), clip(string(text)))
	} else {
		d.problem("field %q is %s, out of range (whole numbers are at most %d)", d.pathString(), clip(string(text)), int64(math.MaxInt64))
	}
	return false
}

// parseInt parses a whole number without allocating for the usual short ones.
func parseInt(b []byte) (int64, error) {
	if len(b) > 0 && len(b) < 19 && b[0] != '-' {
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, strconv.ErrSyntax
			}
			n = n*10 + int64(c-'0')
		}
		return n, nil
	}
	return strconv.ParseInt(string(b), 10, 64)
}

// value reads any value as encoding/json would into an `any`: strings, float64,
// bools, nil, []any and map[string]any. Content is read this way and checked
// against its template later, when the templates are known.
func (d *decoder) value() any {
	switch c := d.peek(); c {
	case '"':
		return string(d.str(true))
	case '[':
		out := []any{}
		d.array(func(i int) {
			d.push("", i)
			out = append(out, d.value())
			d.pop()
		})
		return out
	case '{':
		out := map[string]any{}
		d.object(func(key []byte) {
			k := string(key)
			if _, dup := out[k]; dup {
				d.problem("%s", d.inPath(fmt.Sprintf("field %s is given twice; give each field once", clipQuote(k))))
				d.skip()
				return
			}
			d.push(k, 0)
			out[k] = d.value()
			d.pop()
		})
		return out
	case 't', 'f':
		var b bool
		d.bool(&b)
		return b
	case 'n':
		d.literal("null")
		return nil
	default:
		if c != '-' && (c < '0' || c > '9') {
			d.skip() // ends decoding with the right message
		}
		text := d.number()
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			d.problem("field %q is %s, out of range for a number", d.pathString(), clip(string(text)))
		}
		return f
	}
}

// content reads a document's content: an object of section keys.
func (d *decoder) content(p *map[string]any) {
	switch d.peek() {
	case '{':
		out := map[string]any{}
		d.object(func(key []byte) {
			k := string(key)
			if _, dup := out[k]; dup {
				d.problem("content has section %s twice; give each section once", clipQuote(k))
				d.skip()
				return
			}
			d.push(k, 0)
			out[k] = d.value()
			d.pop()
		})
		*p = out
	case 'n':
		d.literal("null")
	default:
		d.wrongType("an object")
	}
}

// jsonNames lists the JSON names of a struct's fields, from their tags: the
// decoder accepts exactly these.
func jsonNames(v any) []string {
	t := reflect.TypeOf(v)
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

var (
	fileFields      = jsonNames(File{})
	workspaceFields = jsonNames(Workspace{})
	deviceFields    = jsonNames(Device{})
	apiKeyFields    = jsonNames(APIKey{})
	libraryFields   = jsonNames(Library{})
	schemaFields    = jsonNames(Schema{})
	sectionFields   = jsonNames(Section{})
	documentFields  = jsonNames(Document{})
	edgeFields      = jsonNames(Edge{})
	recordingFields = jsonNames(Recording{})
	questionFields  = jsonNames(Question{})
)

// noReader is a programming error: a field of the format without a reader here.
func noReader(name string) { panic("dataset: no reader for field " + name) }

func (d *decoder) workspace(w *Workspace) {
	d.fields(workspaceFields, func(name string) {
		switch name {
		case "id":
			d.string(&w.ID)
		case "name":
			d.string(&w.Name)
		case "plan":
			d.string(&w.Plan)
		case "aiCredit":
			d.int64(&w.AICredit)
		case "ownProviderKey":
			d.bool(&w.OwnProviderKey)
		case "subscription":
			d.string(&w.Subscription)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) device(dv *Device) {
	d.fields(deviceFields, func(name string) {
		switch name {
		case "id":
			d.string(&dv.ID)
		case "workspaceId":
			d.string(&dv.WorkspaceID)
		case "status":
			d.string(&dv.Status)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) apiKey(k *APIKey) {
	d.fields(apiKeyFields, func(name string) {
		switch name {
		case "id":
			d.string(&k.ID)
		case "workspaceId":
			d.string(&k.WorkspaceID)
		case "deviceId":
			d.string(&k.DeviceID)
		case "secret":
			d.string(&k.Secret)
		case "libraries":
			d.strings(&k.Libraries)
		case "recordingDetails":
			d.bool(&k.RecordingDetails)
		case "expiresAt":
			d.string(&k.ExpiresAt)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) library(l *Library) {
	d.fields(libraryFields, func(name string) {
		switch name {
		case "id":
			d.string(&l.ID)
		case "workspaceId":
			d.string(&l.WorkspaceID)
		case "name":
			d.string(&l.Name)
		case "slug":
			d.string(&l.Slug)
		case "previousSlugs":
			d.strings(&l.PreviousSlugs)
		case "description":
			d.string(&l.Description)
		case "createdAt":
			d.string(&l.CreatedAt)
		case "updatedAt":
			d.string(&l.UpdatedAt)
		case "schema":
			d.object1(func() { d.schema(&l.Schema) })
		default:
			noReader(name)
		}
	})
}

func (d *decoder) schema(s *Schema) {
	d.fields(schemaFields, func(name string) {
		switch name {
		case "version":
			d.int(&s.Version)
		case "sections":
			d.list(func() { s.Sections = []Section{} }, func() {
				s.Sections = append(s.Sections, Section{})
				d.object1(func() { d.section(&s.Sections[len(s.Sections)-1]) })
			})
		default:
			noReader(name)
		}
	})
}

func (d *decoder) section(s *Section) {
	d.fields(sectionFields, func(name string) {
		switch name {
		case "key":
			d.string(&s.Key)
		case "title":
			d.string(&s.Title)
		case "type":
			d.string(&s.Type)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) document(doc *Document) {
	d.fields(documentFields, func(name string) {
		switch name {
		case "id":
			d.string(&doc.ID)
		case "libraryId":
			d.string(&doc.LibraryID)
		case "slug":
			d.string(&doc.Slug)
		case "title":
			d.string(&doc.Title)
		case "category":
			d.string(&doc.Category)
		case "tags":
			d.strings(&doc.Tags)
		case "applications":
			d.strings(&doc.Applications)
		case "deviceCount":
			d.int(&doc.DeviceCount)
		case "firstSeen":
			d.string(&doc.FirstSeen)
		case "lastSeen":
			d.string(&doc.LastSeen)
		case "createdAt":
			d.string(&doc.CreatedAt)
		case "updatedAt":
			d.string(&doc.UpdatedAt)
		case "content":
			d.content(&doc.Content)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) edge(e *Edge) {
	d.fields(edgeFields, func(name string) {
		switch name {
		case "sourceDocumentId":
			d.string(&e.SourceDocumentID)
		case "targetDocumentId":
			d.string(&e.TargetDocumentID)
		case "label":
			d.string(&e.Label)
		case "edgeType":
			d.string(&e.EdgeType)
		case "recordingCount":
			d.int(&e.RecordingCount)
		case "support":
			d.int(&e.Support)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) recording(r *Recording) {
	d.fields(recordingFields, func(name string) {
		switch name {
		case "id":
			d.string(&r.ID)
		case "documentIds":
			d.strings(&r.DocumentIDs)
		case "title":
			d.string(&r.Title)
		case "status":
			d.string(&r.Status)
		case "shared":
			d.bool(&r.Shared)
		case "clientCreatedAt":
			d.string(&r.ClientCreatedAt)
		case "questions":
			d.list(func() { r.Questions = []Question{} }, func() {
				r.Questions = append(r.Questions, Question{})
				d.object1(func() { d.question(&r.Questions[len(r.Questions)-1]) })
			})
		case "steps":
			d.strings(&r.Steps)
		default:
			noReader(name)
		}
	})
}

func (d *decoder) question(q *Question) {
	d.fields(questionFields, func(name string) {
		switch name {
		case "id":
			d.string(&q.ID)
		case "question":
			d.string(&q.Question)
		case "response":
			d.string(&q.Response)
		case "sequenceOrder":
			d.int(&q.SequenceOrder)
		default:
			noReader(name)
		}
	})
}

// object1 reads a nested object with read, or null, or records a wrong type.
func (d *decoder) object1(read func()) {
	switch d.peek() {
	case '{':
		read()
	case 'n':
		d.literal("null")
	default:
		d.wrongType("an object")
	}
}

// list reads a nested array: start runs at its '[', elem once per element (at
// the element's path).
func (d *decoder) list(start, elem func()) {
	switch d.peek() {
	case '[':
		start()
		d.array(func(i int) {
			d.push("", i)
			elem()
			d.pop()
		})
	case 'n':
		d.literal("null")
	default:
		d.wrongType("an array")
	}
}

// decodeFile reads the whole file into f, recording the problems of items in v.
// It returns the problem that ended decoding, if one did.
func decodeFile(r io.Reader, v *validator, f *File) (fatal string) {
	d := newDecoder(r)
	defer func() {
		if x := recover(); x != nil {
			fe, ok := x.(*fatalError)
			if !ok {
				panic(x)
			}
			fatal = fe.msg
		}
	}()
	d.start()
	if c := d.peek(); c != '{' {
		if c == -1 {
			return "the file is empty; it must hold one JSON object such as {\"workspaces\": [...], \"documents\": [...]}"
		}
		if c == '/' {
			return "the file is not a data-set JSON object: it starts with a comment, and JSON has none"
		}
		return "the file is not a data-set JSON object: " + errNotObject.Error()
	}
	seen := map[string]bool{}
	d.object(func(key []byte) {
		name := string(key)
		if seen[name] {
			v.addTop(fmt.Sprintf("the array %s is given twice; give each array once", clipQuote(name)))
			d.skip()
			return
		}
		seen[name] = true
		switch name {
		case "workspaces":
			decodeArray(d, v, name, &f.Workspaces, (*decoder).workspace)
		case "devices":
			decodeArray(d, v, name, &f.Devices, (*decoder).device)
		case "apiKeys":
			decodeArray(d, v, name, &f.APIKeys, (*decoder).apiKey)
		case "libraries":
			decodeArray(d, v, name, &f.Libraries, (*decoder).library)
		case "documents":
			decodeArray(d, v, name, &f.Documents, (*decoder).document)
		case "edges":
			decodeArray(d, v, name, &f.Edges, (*decoder).edge)
		case "recordings":
			decodeArray(d, v, name, &f.Recordings, (*decoder).recording)
		default:
			v.addTop("the top level has an " + unknownField(name, fileFields))
			d.skip()
		}
	})
	if c := d.peek(); c != -1 {
		return "the file has data after its JSON object, at " + d.position(d.pos) + "; it must hold exactly one object"
	}
	return ""
}

// start skips a UTF-8 byte order mark and refuses UTF-16, which editors on
// Windows may save.
func (d *decoder) start() {
	for d.end < 4 && !d.eof {
		d.fill()
	}
	b := d.buf[:d.end]
	switch {
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		d.pos = 3
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}), bytes.HasPrefix(b, []byte{0xff, 0xfe}),
		len(b) >= 2 && (b[0] == 0 || b[1] == 0):
		panic(&fatalError{"the file is not UTF-8 (it looks like UTF-16); save it as UTF-8"})
	}
}

// decodeArray reads one top-level array item by item. A problem inside an item
// is that item's, named with its array, index and ID, and reading goes on; a
// syntax error ends it.
func decodeArray[T any, P interface {
	*T
	identified
}](d *decoder, v *validator, name string, out *[]T, read func(*decoder, *T)) {
	switch c := d.peek(); c {
	case '[':
	case 'n': // "documents": null is an empty array
		d.literal("null")
		return
	default:
		v.addTop(fmt.Sprintf("%q must be an array of objects, not %s", name, d.kind()))
		return
	}
	d.arrName, d.index = name, -1
	d.array(func(i int) {
		var item T
		d.index, d.cur = i, P(&item)
		d.probs = d.probs[:0]
		if d.peek() == '{' {
			read(d, &item)
		} else {
			d.wrongType("an object")
		}
		id := P(&item).shownID()
		for _, p := range d.probs {
			v.add(itemName(name, i, id), "%s", p)
		}
		*out = append(*out, item)
		d.cur = nil
	})
	d.arrName = ""
}
