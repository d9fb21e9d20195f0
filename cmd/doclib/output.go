package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"

	doclib "github.com/doclib/doclib/shared"
)

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// rows writes a list: on a terminal an aligned table under its header; piped,
// one line per row with its values separated by tabs, and no header, so
// that cut, awk and sort read it. Values are cleaned of control characters
// and tabs by the caller (render.Clean).
type rows struct {
	tw *tabwriter.Writer // nil when piped
	w  io.Writer
}

func (a *app) rows(header ...string) *rows {
	if !a.tty {
		return &rows{w: a.stdout}
	}
	r := &rows{tw: tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)}
	r.w = r.tw
	fmt.Fprintln(r.w, strings.Join(header, "\t"))
	return r
}

// row writes one row; a value is printed with %v.
func (r *rows) row(values ...any) {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	fmt.Fprintln(r.w, strings.Join(s, "\t"))
}

// done writes the aligned table.
func (r *rows) done() error {
	if r.tw != nil {
		return r.tw.Flush()
	}
	return nil
}

// table aligns tab-separated columns; Flush writes them.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// note writes a line for people: on stdout at a terminal, on stderr when
// stdout is piped, so that a program reading stdout gets only the data.
func (a *app) note(format string, args ...any) {
	w := a.stdout
	if !a.tty {
		w = a.stderr
	}
	fmt.Fprintf(w, format+"\n", args...)
}

func day(t api.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02")
}

// day is a timestamp in a list: its date for people, the whole RFC 3339
// time when piped.
func (a *app) day(t api.Time) string {
	if !a.tty && !t.IsZero() {
		return t.UTC().Format(time.RFC3339)
	}
	return day(t)
}

// plural is a count with its word: "1 document", "3 documents".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, doclib.Plural(n, one, many))
}

// footer says where a page is in a list: "page 2 of 7 (131 documents) —
// next: --page 3".
func footer(page, pageSize, total int, one, many string) string {
	if pageSize < 1 {
		pageSize = 1
	}
	pages := max((total+pageSize-1)/pageSize, 1)
	s := fmt.Sprintf("page %d of %d (%s)", page, pages, plural(total, one, many))
	switch {
	case page > pages:
		s += fmt.Sprintf(" — past the last page; try --page %d", pages)
	case page < pages:
		s += fmt.Sprintf(" — next: --page %d", page+1)
	}
	return s
}

// pastEnd tells on stderr, when standard output is no terminal (where the
// footer tells it), that the page asked for is past the last one. Such a
// page is an empty list and exit 0, as gh answers a list with nothing in it
// (no results is no failure); without this note a pipe could not tell it
// from a library with nothing in it.
func (a *app) pastEnd(all bool, page, pageSize, total int, one, many string) {
	if a.tty || all || total == 0 || pageSize < 1 {
		return
	}
	if pages := (total + pageSize - 1) / pageSize; page > pages {
		fmt.Fprintf(a.stderr, "doclib: --page %d is past the last page, %d (%s); nothing to print. Try --page %d.\n",
			page, pages, plural(total, one, many), pages)
	}
}

// oneArg checks a command's positional arguments: exactly one, described by
// what (e.g. "a library ID or slug").
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{fmt.Errorf("%s takes one argument, %s; got %d", cmd.Name(), what, len(args))}
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.Name(), args[0])}
	}
	return nil
}

// pageFlags are --page, --page-size and --all of a paged command.
type pageFlags struct {
	page, size int
	all        bool
	max        int // the API's largest page, used by --all unless --page-size is given
}

func (p *pageFlags) register(cmd *cobra.Command, max int) {
	p.max = max
	cmd.Flags().IntVar(&p.page, "page", 0, "page `N`, from 1 (the API's default: 1)")
	cmd.Flags().IntVar(&p.size, "page-size", 0, fmt.Sprintf("`N` items per page, at most %d (the API's default: 20)", max))
	cmd.Flags().BoolVar(&p.all, "all", false, fmt.Sprintf("walk every page and print every item, in pages of %d unless --page-size (with --json: one array of every item)", max))
}

// check refuses values the client cannot send. The API validates the rest
// (a page size above the maximum is capped and echoed).
func (p *pageFlags) check(cmd *cobra.Command) error {
	switch {
	case cmd.Flags().Changed("page") && p.page < 1:
		return usageError{fmt.Errorf("--page starts at 1, not %d", p.page)}
	case cmd.Flags().Changed("page-size") && p.size < 1:
		return usageError{fmt.Errorf("--page-size must be 1 or more, not %d", p.size)}
	case p.all && cmd.Flags().Changed("page"):
		return usageError{errors.New("--all walks every page from the first; leave out --page")}
	}
	return nil
}

// first is the page to ask for first.
func (p *pageFlags) first() client.Page {
	if p.all {
		return client.Page{Page: 1, PageSize: orDefault(p.size, p.max)}
	}
	return client.Page{Page: p.page, PageSize: p.size}
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// fetchPages gets the page the flags select or, with --all, every page from
// the first, merging each later page into the first (merge appends its items
// and returns how many it had). The API's page size is followed, since it
// echoes the size it capped to. With --all the result claims page 1 and a
// page size of everything it holds, so that it reads as one page.
//
// A walk of more than one page says how far it got on stderr when stderr is a
// terminal, since nothing is printed before the last page. With no items at
// all, the first page is returned as the API sent it.
func fetchPages[P any](a *app, p *pageFlags, fetch func(client.Page) (*P, error), merge func(into, page *P) int,
	counts func(*P) (total, pageSize int), whole func(*P, int)) (*P, error) {
	pg := p.first()
	var first *P
	got := 0
	progress := a.progress()
	defer progress(0, 0)
	for {
		page, err := fetch(pg)
		if err != nil {
			return nil, err
		}
		n := merge(first, page)
		if first == nil {
			first = page
		}
		got += n
		if !p.all {
			return first, nil
		}
		total, size := counts(page)
		if n == 0 || size < 1 || pg.Page*size >= total {
			if got > 0 {
				whole(first, got)
			}
			return first, nil
		}
		progress(pg.Page, (total+size-1)/size)
		pg.Page++
		pg.PageSize = size
	}
}

// progress returns a function that shows "page N of M" on stderr while a walk
// runs, when stderr is a terminal; called with (0, 0) it clears the line.
func (a *app) progress() func(page, pages int) {
	f, ok := a.stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return func(int, int) {}
	}
	shown := false
	return func(page, pages int) {
		if page == 0 {
			if shown {
				fmt.Fprint(f, "\r\033[K")
			}
			return
		}
		shown = true
		fmt.Fprintf(f, "\rdoclib: fetched page %d of %d…", page, pages)
	}
}

// errWriter remembers the first error of its writes, so that a command whose
// output could not be written (a full disk) fails instead of exiting 0.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
