package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// csvColumns are the columns a CSV may have; the first three are required.
var csvColumns = []string{"library", "title", "step", "category", "tags", "applications", "summary"}

// readCSV reads a CSV with a header and one row per step: the rows with the
// same library and title make one document, their steps in the rows' order.
// category, tags, applications and summary may be given on any of its rows,
// but only one value each.
func readCSV(path string) ([]doc, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	if err := checkUTF8(path, src); err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(src))
	header, err := r.Read()
	if err != nil {
		return nil, csvError(path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(csvColumns, h) {
			return nil, fmt.Errorf("%s:1: column %q is not one of %s", path, h, strings.Join(csvColumns, ", "))
		}
		col[h] = i
	}
	for _, need := range csvColumns[:3] {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: the header has no %q column; it needs library, title and step", path, need)
		}
	}
	var docs []doc
	index := map[string]int{} // library + "\x00" + title -> docs index
	setAt := map[string]int{} // docs index + field -> the line that set it
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(path, err)
		}
		line, _ := r.FieldPos(0)
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		for _, need := range csvColumns[:3] {
			if get(need) == "" {
				return nil, fmt.Errorf("%s:%d: %s is empty; every row needs a library, a title and a step", path, line, need)
			}
		}
		k := get("library") + "\x00" + get("title")
		i, ok := index[k]
		if !ok {
			i = len(docs)
			index[k] = i
			docs = append(docs, doc{where: fmt.Sprintf("%s:%d", path, line), library: get("library"), title: get("title")})
		}
		d := &docs[i]
		d.steps = append(d.steps, get("step"))
		for _, f := range []struct {
			name string
			set  func(string)
		}{
			{"category", func(v string) { d.category = v }},
			{"summary", func(v string) { d.summary = v }},
			{"tags", func(v string) { d.tags = splitList(v) }},
			{"applications", func(v string) { d.applications = splitList(v) }},
		} {
			v := get(f.name)
			if v == "" {
				continue
			}
			key := fmt.Sprint(i, f.name)
			if at, ok := setAt[key]; ok {
				return nil, fmt.Errorf("%s:%d: %s of %q is already given on line %d; give it on one row of the document only", path, line, f.name, d.title, at)
			}
			setAt[key] = line
			f.set(v)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s has a header but no rows; add one row per step", path)
	}
	return docs, nil
}

// splitList splits "vpn; security" into its values.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ";") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// csvError says what is wrong with a line of the CSV, in a reader's terms.
func csvError(path string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s is empty; it needs a header line such as \"library,title,step\"", path)
		}
		return unreadable(path, err)
	}
	switch {
	case errors.Is(pe.Err, csv.ErrFieldCount):
		return fmt.Errorf("%s:%d: this row has a different number of fields than the header; put a value with a comma in double quotes", path, pe.Line)
	case errors.Is(pe.Err, csv.ErrQuote), errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Errorf("%s:%d: a double quote is out of place; put a value with quotes in double quotes and write each quote in it twice (\"\")", path, pe.StartLine)
	}
	return fmt.Errorf("%s:%d: cannot be read as CSV", path, pe.Line)
}
