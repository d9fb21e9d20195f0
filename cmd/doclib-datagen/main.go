// Command doclib-datagen writes a synthetic data set: the demo set by default
// (shared/data/demo/demo.json is its output), or a large one for benchmarks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclib-datagen:", err)
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "Run 'doclib-datagen --help' for usage.")
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// maxDocuments keeps a typo from filling the disk.
const maxDocuments = 5_000_000

const usage = `Usage: doclib-datagen [--documents N] [--seed N] [--big-answers] [--out FILE]

Writes a deterministic doclib data set (docs/dataset.md): the same
options always give the same bytes. The default is the demo set of 200 documents
that shared/data/demo/demo.json holds; larger sets keep the same workspaces, keys and
libraries, put about 40%% of the documents in lib_it, give each library a busy core
(a twentieth of its documents, recorded most and linked densely, so that the graph
of lib_it reaches both of its caps at 100,000 documents), and are written as compact
JSON above %d documents.

Options:
  --documents N   number of documents, %d to %d (default 200)
  --seed N        random seed (default 1, the demo's; 0 means 1)
  --big-answers   the demo set and one more library, lib_big (slug big-answers),
                  of 160 documents near the 300,000-byte content limit, linked
                  so densely that a page of 100 (30 MB), a depth-3 traversal
                  (53 MB) and the graph (7.8 MB) each pass the 6 MB a buffered
                  Lambda answer may carry; --documents and --seed do not apply
  --out FILE      file to write, replaced only once complete; "-" is standard
                  output (default "-")
  --help          show this help

Examples:
  go run ./cmd/doclib-datagen --out shared/data/demo/demo.json
  go run ./cmd/doclib-datagen --documents 100000 --out /tmp/big.json
  go run ./cmd/doclib-datagen --big-answers --out /tmp/big-answers.json
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doclib-datagen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	documents := fs.Int("documents", demo.DemoDocuments, "")
	seed := fs.Uint64("seed", 1, "")
	out := fs.String("out", "-", "")
	bigAnswers := fs.Bool("big-answers", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usage, demo.CompactAbove, demo.MinDocuments, maxDocuments)
			return nil
		}
		return usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q; every option is a flag", fs.Arg(0))}
	case *documents < demo.MinDocuments || *documents > maxDocuments:
		return usageError{fmt.Sprintf("--documents %d is out of range: give %d (one per library) to %d", *documents, demo.MinDocuments, maxDocuments)}
	case *out == "":
		return usageError{`--out is empty: give a file name, or "-" for standard output`}
	}
	if *bigAnswers {
		var clash []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "documents" || f.Name == "seed" {
				clash = append(clash, "--"+f.Name)
			}
		})
		if len(clash) > 0 {
			return usageError{fmt.Sprintf("--big-answers is a fixed set; leave out %s", strings.Join(clash, " and "))}
		}
	}

	large := *documents > demo.CompactAbove
	if large {
		fmt.Fprintf(stderr, "generating %d documents (seed %d)...\n", *documents, *seed)
	}
	start := time.Now()
	f := demo.Generate(demo.Options{Documents: *documents, Seed: *seed})
	if *bigAnswers {
		f = demo.BigAnswers(demo.BigOptions{})
	}
	generated := time.Since(start)
	if err := ctx.Err(); err != nil {
		return err
	}
	if large {
		fmt.Fprintf(stderr, "generated in %.1fs, writing...\n", generated.Seconds())
	}

	target := "stdout"
	var size int64
	if *out == "-" {
		cw := &countingWriter{ctx: ctx, w: stdout}
		if err := demo.Encode(cw, f); err != nil {
			return err
		}
		size = cw.n
	} else {
		target = *out
		n, err := writeFile(ctx, *out, func(w io.Writer) error { return demo.Encode(w, f) })
		if err != nil {
			return err
		}
		size = n
	}
	fmt.Fprintf(stderr, "generated %d documents, %d edges, %d recordings (%.1f MB) in %.1fs -> %s\n",
		len(f.Documents), len(f.Edges), len(f.Recordings), float64(size)/1e6, time.Since(start).Seconds(), target)
	return nil
}

// writeFile writes the file whole or not at all, replacing what is there
// (dataset.WriteFile), and says how many bytes it wrote.
func writeFile(ctx context.Context, path string, write func(io.Writer) error) (int64, error) {
	var n int64
	err := dataset.WriteFile(path, 0o644, true, func(w io.Writer) error {
		cw := &countingWriter{ctx: ctx, w: w}
		err := write(cw)
		n = cw.n
		return err
	})
	return n, err
}

// countingWriter counts bytes and stops the write once ctx is done.
type countingWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
