// Command doclib-dataset turns a folder of Markdown files or a CSV of steps
// into a data-set file (docs/dataset.md), and checks a data-set file with the
// loader the server and the import use.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

// usageError marks a mistake in the command line (exit status 2).
type usageError struct{ error }

// run is the whole program, so that tests drive what main does.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	root := newRoot(stdout, stderr, now)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "doclib-dataset:", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

func newRoot(stdout, stderr io.Writer, now func() time.Time) *cobra.Command {
	root := &cobra.Command{
		Use:   "doclib-dataset",
		Short: "Make a data set from Markdown files or a CSV, and check data-set files",
		Long: `doclib-dataset makes the data-set file doclib-server --data and doclib-admin
import read (docs/dataset.md) from documents you already have, and checks a
data-set file with the same loader they use.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(fromCommand(stdout, stderr, now, markdownCommand), fromCommand(stdout, stderr, now, csvCommand),
		checkCommand(stdout))
	return root
}

// source is one way to read documents: a subcommand reading its argument.
type source struct {
	use, short, example string
	long                string // what the source's reader refuses, for --help
	read                func(path string) ([]doc, error)
}

var markdownCommand = source{
	use:   "from-markdown DIR",
	short: "Make a data set from a folder of Markdown files, one document per file",
	example: `  doclib-dataset from-markdown docs/examples/markdown --out my-data.json
  doclib-dataset from-markdown ./runbooks --workspace ws_acme --workspace-name Acme --out ~/acme.json`,
	long: `Each .md file below DIR, in any depth of folders, is one document (docs/dataset.md).
A file that is not UTF-8 is refused by file and line, and so is a line with more
than 32 quotes or lists nested in it. A symbolic link whose target is outside DIR
is refused; a link to a .md file inside DIR is read, a link to a folder is not
followed.`,
	read: readMarkdown,
}

var csvCommand = source{
	use:     "from-csv FILE",
	short:   "Make a data set from a CSV file with one row per step",
	example: `  doclib-dataset from-csv docs/examples/steps.csv --out my-data.json`,
	long: `A header line, then one row per step (docs/dataset.md). A file that is not UTF-8
is refused by line.`,
	read: readCSV,
}

func fromCommand(stdout, stderr io.Writer, now func() time.Time, s source) *cobra.Command {
	var o options
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   s.use,
		Short: s.short,
		Long: s.short + ".\n\n" + s.long + `

Unless --no-key, the data set holds a live API key (key_local, for every
library, with a new random secret written nowhere else): keep the file private
and out of version control. .gitignore covers my-data.json at the top of the
checkout; write any other name outside the checkout. --out refuses a file that
exists; --force replaces it.`,
		Example: s.example,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one argument; see --help", s.use)}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if out != "" {
				if err := exists(out, force); err != nil {
					return err
				}
			}
			docs, err := s.read(args[0])
			if err != nil {
				return err
			}
			o.at = now().UTC().Truncate(time.Second)
			f, err := build(docs, o)
			if err != nil {
				return err
			}
			return write(f, out, force, stdout, stderr, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "out", "o", "", "write the data set to `FILE`, readable by you only (default: standard output); an existing FILE is refused")
	fl.BoolVar(&force, "force", false, "replace the --out file if it exists")
	fl.StringVar(&o.workspaceID, "workspace", "ws_local", "the workspace's `ID` (ws_ and 1 to 64 letters, digits, _ or -)")
	fl.StringVar(&o.workspaceName, "workspace-name", "Local", "the workspace's `NAME`")
	fl.BoolVar(&o.noKey, "no-key", false, "write no API key (make keys later with doclib-admin keys create)")
	return cmd
}

func checkCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "check FILE",
		Short:   "Check a data-set file as doclib-server --data and doclib-admin import do",
		Example: `  doclib-dataset check docs/examples/minimal.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("check takes one data-set file; see --help")}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return unreadable(args[0], err)
			}
			defer f.Close()
			d, err := dataset.Load(f)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			fmt.Fprintf(stdout, "%s is a valid data set: %s.\n", args[0], summary(d))
			return nil
		},
	}
}

func summary(d *doclib.DataSet) string {
	return fmt.Sprintf("%s, %s, %s, %s, %s, %s", count(len(d.Workspaces), "workspace"), count(len(d.Libraries), "library"),
		count(len(d.Documents), "document"), count(len(d.Edges), "edge"), count(len(d.Recordings), "recording"), count(len(d.APIKeys), "key"))
}

func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "ry"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// unreadable says why a file or folder given on the command line cannot be read.
func unreadable(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; check the path", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s cannot be read: permission denied", path)
	}
	return fmt.Errorf("%s cannot be read: %w", path, err)
}
