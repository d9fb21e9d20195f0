// Command standin runs the synthesized stack on this machine (package
// internal/standin): it synthesizes the CDK app's stack for the context
// given (or reuses the synthesis cached in .cache/standin/), starts
// dynalite, imports a data set, lets the stream index it, and serves the
// API until interrupted. scripts/standin runs it:
//
//	scripts/standin                                   # the default stack, Doclib-demo
//	scripts/standin -c search=embedded                # the embedded search tier
//	scripts/standin -c usagePlans=false --addr 127.0.0.1:8091
//	scripts/standin --data shared/data/demo/demo.json --no-cache
//
// -c KEY=VALUE is the app's context, as `cdk synth -c KEY=VALUE` takes it;
// --customer NAME is short for -c customer=NAME. Package cli reads the
// command line and writes what it prints (docs/standin.md, "Running it by
// hand"); this file only wires it to package standin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/doclib/doclib/infra/stack"
	"github.com/doclib/doclib/internal/standin"
	"github.com/doclib/doclib/internal/standin/cli"
	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakes3"
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
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	// The app starts from cdk.json's context; -c values outrank it.
	project, err := stack.ProjectContext(root)
	if err != nil {
		return err
	}
	o, err := cli.Parse(args, project, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	started := time.Now()
	say := func(format string, args ...any) {
		fmt.Fprintf(stderr, "standin: %5.1fs  %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
	}
	for _, w := range o.Warnings() {
		fmt.Fprintln(stderr, "standin:", w)
	}
	var d *doclib.DataSet
	source := "the built-in demo data set"
	if o.Data != "" {
		d, err = dataset.LoadFile(o.Data)
		source = o.Data
	} else {
		d, err = demo.Load()
	}
	if err != nil {
		return err
	}
	// A busy address fails now rather than after the synthesis.
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", o.Addr, err)
	}
	_ = ln.Close()
	var asm *standin.Synthesized
	if o.NoCache {
		say("synthesizing (go run ./infra, which builds the functions; --no-cache: the cache is neither read nor written)")
		dir, err := os.MkdirTemp("", "doclib-standin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if asm, err = standin.Synth(root, dir, o.Context); err != nil {
			return err
		}
	} else if asm, _, err = standin.SynthCached(root, filepath.Join(root, cli.CacheDir), o.Context, say); err != nil {
		return err
	}
	say("starting dynalite")
	db, stopDB, err := dynalitetest.Launch()
	if err != nil {
		return fmt.Errorf("dynalite: %w (scripts/tools dynalite installs it)", err)
	}
	defer stopDB()
	logs := io.Discard
	if o.Verbose {
		logs = stderr
	}
	opts := standin.Options{Assembly: asm, DynamoDB: db.Endpoint, Data: d, Addr: o.Addr, Logs: logs, Run: "standin", Progress: say}
	if o.S3Loopback {
		opts.S3Speed = &fakes3.Speed{}
	}
	s, err := standin.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "doclib stand-in of %s ready at %s (table %s, %s)\n", asm.Stack, s.URL, s.Table, time.Since(started).Round(100*time.Millisecond))
	cli.Ready{Stack: asm.Stack, Context: o.Effective(), Table: s.Table, DynamoDB: db.Endpoint, URL: s.URL,
		Source: source, Data: d, PID: os.Getpid()}.Print(stderr)
	<-ctx.Done()
	say("stopping")
	return nil
}
