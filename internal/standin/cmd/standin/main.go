// Command standin runs the synthesized stack on this machine (package
// internal/standin): it synthesizes with `go run ./infra`, starts dynalite,
// imports a data set, lets the stream index it, and serves the API until
// interrupted. scripts/standin runs it:
//
//	scripts/standin --data shared/data/demo/demo.json --addr 127.0.0.1:8090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/doclib/doclib/internal/dynalitetest"
	"github.com/doclib/doclib/internal/standin"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "data set `FILE` to import (default: the built-in demo data set)")
	addr := fs.String("addr", "127.0.0.1:8090", "`HOST:PORT` the API listens on")
	customer := fs.String("customer", "demo", "the stack's customer (CDK context customer)")
	verbose := fs.Bool("v", false, "print the functions' and the stand-in's log lines")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: scripts/standin [--data FILE] [--addr HOST:PORT] [--customer NAME] [-v]

Runs the stack that 'go run ./infra' synthesizes, on this machine: the real
function binaries under a Lambda runtime emulator, the REST API with its
authorizer, usage plans and gateway responses, and every AWS call checked
against the template's IAM policies (docs/standin.md). It prints one line
when the API is ready, then serves until interrupted.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	var d *doclib.DataSet
	var err error
	if *data != "" {
		d, err = dataset.LoadFile(*data)
	} else {
		d, err = demo.Load()
	}
	if err != nil {
		return err
	}
	logs := io.Discard
	if *verbose {
		logs = stderr
	}
	started := time.Now()
	fmt.Fprintln(stderr, "synthesizing the stack (go run ./infra; the first run compiles the CDK app and the functions)...")
	dir, err := os.MkdirTemp("", "doclib-standin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	asm, err := standin.Synth(root, dir, map[string]string{"customer": *customer})
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "starting dynalite, the functions and the gateway, importing the data set...")
	db, stopDB, err := dynalitetest.Launch()
	if err != nil {
		return fmt.Errorf("dynalite: %w (scripts/tools installs it)", err)
	}
	defer stopDB()
	s, err := standin.Start(ctx, standin.Options{Assembly: asm, DynamoDB: db.Endpoint, Data: d, Addr: *addr, Logs: logs, Run: "standin"})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "doclib stand-in of %s ready at %s (table %s, %s)\n", asm.Stack, s.URL, s.Table, time.Since(started).Round(time.Second))
	<-ctx.Done()
	return nil
}
