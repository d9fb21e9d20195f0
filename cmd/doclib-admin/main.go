// Command doclib-admin is the operators' tool for a doclib table in DynamoDB:
// create it (local use), import a data set, and create, list and revoke keys.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the work failed: a bad file, DynamoDB unreachable...
	exitUsage = 2 // the command line is wrong
)

// usageError marks a mistake in the command line.
type usageError struct{ error }

func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	default:
		return exitError
	}
}
