// Command infra is doclib's AWS CDK app: `go run ./infra` from the repository
// root (cdk.json's "app") synthesizes the stack of one customer, e.g.
//
//	cdk deploy -c customer=acme
//	CDK_OUTDIR=/tmp/out go run ./infra   # the template, without the CDK CLI
//
// It builds the Lambda functions from ./functions itself (no Docker) and
// checks the stack with cdk-nag's AwsSolutions rules: an unsuppressed
// finding is an error that fails `cdk deploy`. infra/README.md lists the
// context values.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/doclib/doclib/infra/stack"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/settings"
)

func main() {
	// No jsii.Close(): in jsii-runtime-go 1.127 it races with the runtime's
	// own wait for its node process and may print a misleading "Runtime
	// process exited abnormally"; node ends by itself when the app does.
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := stack.ModuleRoot()
	if err != nil {
		return err
	}
	// cdk.json's context (its feature flags), for a synthesis without the
	// CLI; the CLI's own CDK_CONTEXT_JSON outranks it (stack.ProjectContext).
	ctx, err := stack.ProjectContext(root)
	if err != nil {
		return err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	cfg, err := stack.ParseConfig(func(key string) any { return app.Node().TryGetContext(jsii.String(key)) })
	if err != nil {
		return err
	}
	bins, err := binaries(root, *app.Outdir())
	if err != nil {
		return err
	}
	// The CDK CLI shows what the app writes to stderr as it comes: each
	// step that takes long says so as it starts.
	started := time.Now()
	fmt.Fprintln(os.Stderr, "infra: synthesizing the stack and checking it with cdk-nag (about a minute on 2 cores)")
	if _, err := stack.New(app, cfg, bins); err != nil {
		return err
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
	fmt.Fprintf(os.Stderr, "infra: synthesized in %s\n", time.Since(started).Round(time.Second))
	return nil
}

// binaries builds the functions into the output directory, or takes them
// from the directory settings.EnvLambdaDir names, when set.
func binaries(root, outdir string) (stack.Binaries, error) {
	if dir := os.Getenv(settings.EnvLambdaDir); dir != "" {
		return stack.Prebuilt(dir, lambdaapp.Functions)
	}
	started := time.Now()
	fmt.Fprintf(os.Stderr, "infra: building the %d Lambda functions (./functions/*, in parallel): minutes the first time on 2 cores, seconds after\n", len(lambdaapp.Functions))
	bins, err := stack.Build(root, filepath.Join(outdir, "doclib-functions"), lambdaapp.Functions)
	if err == nil {
		fmt.Fprintf(os.Stderr, "infra: built the functions in %s\n", time.Since(started).Round(time.Second))
	}
	return bins, err
}
