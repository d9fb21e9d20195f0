package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/demo"
)

// checkDemoKeys refuses a data set holding a key whose secret is one of the
// demo data set's, which are published in the README, unless DynamoDB is on
// this machine or the operator asked for it.
func (a *app) checkDemoKeys(d *doclib.DataSet, allow bool) error {
	if allow || a.localDynamoDB() {
		return nil
	}
	demoHashes := make(map[doclib.KeyHash]bool, len(demo.Keys))
	for _, k := range demo.Keys {
		demoHashes[doclib.HashKey(k.Secret)] = true
	}
	var ids []string
	for _, k := range d.APIKeys {
		if demoHashes[k.Hash] {
			ids = append(ids, k.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fmt.Errorf("refused: %d keys of the data set (%s) carry the demo data set's secrets, which anyone can read in the README, "+
		"so they would open table %s to anyone. Give those keys new secrets in the file, or, for a table that only serves the demo, "+
		"run again with --allow-demo-keys", len(ids), strings.Join(ids, ", "), a.table)
}

// localDynamoDB reports whether AWS_ENDPOINT_URL_DYNAMODB names this machine
// (dynalite, DynamoDB Local).
func (a *app) localDynamoDB() bool {
	u, err := url.Parse(a.getenv("AWS_ENDPOINT_URL_DYNAMODB"))
	if err != nil || u.Hostname() == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// leftoverLines names the leftovers by kind, at most limit IDs a kind (0:
// all of them).
func leftoverLines(l *dynamo.Leftovers, limit int) []string {
	var out []string
	for _, kind := range []struct {
		name string
		ids  []string
	}{{"keys", l.Keys}, {"devices", l.Devices}, {"libraries", l.Libraries}, {"slugs", l.Slugs},
		{"documents", l.Documents}, {"recordings", l.Recordings}} {
		if len(kind.ids) == 0 {
			continue
		}
		ids := kind.ids
		more := ""
		if limit > 0 && len(ids) > limit {
			ids, more = ids[:limit], fmt.Sprintf(" and %d more", len(kind.ids)-limit)
		}
		out = append(out, fmt.Sprintf("%s (%d): %s%s", kind.name, len(kind.ids), strings.Join(ids, ", "), more))
	}
	if l.Edges > 0 {
		out = append(out, fmt.Sprintf("edges: %d", l.Edges))
	}
	return out
}

// warnLeftovers says, loudly, what an import without --prune kept.
func (a *app) warnLeftovers(file, table string, l *dynamo.Leftovers) {
	if l.Empty() {
		return
	}
	fmt.Fprintf(a.stderr, "\nWARNING: %d items of earlier imports of these workspaces are not in %s and were KEPT: they are still served", l.Items, file)
	if len(l.Keys) > 0 {
		fmt.Fprintf(a.stderr, ", and the %d keys among them STILL WORK", len(l.Keys))
	}
	fmt.Fprintln(a.stderr, ".")
	for _, line := range leftoverLines(l, 10) {
		fmt.Fprintln(a.stderr, "  "+line)
	}
	fmt.Fprintf(a.stderr, "To delete them: doclib-admin import --data %s --table %s --prune (add --dry-run to list them all first, writing nothing).\n", file, table)
}

// printDryRun reports a dry run: the file checked, and what --prune would delete.
func (a *app) printDryRun(file, table string, res *dynamo.ImportResult) {
	fmt.Fprintf(a.stdout, "Dry run: %s fits table %s; nothing was written.\n", file, table)
	fmt.Fprintf(a.stdout, "  The file has %s (%s).\n", itemCounts(res), doclib.Count(res.Items, "item", "items"))
	if res.Leftovers.Empty() {
		fmt.Fprintln(a.stdout, "  --prune would delete nothing: the table holds nothing of these workspaces that the file lacks.")
		return
	}
	fmt.Fprintf(a.stdout, "  --prune would delete %d items of earlier imports (without --prune they stay, and their keys keep working):\n", res.Leftovers.Items)
	for _, line := range leftoverLines(res.Leftovers, 0) {
		fmt.Fprintln(a.stdout, "    "+line)
	}
}

// itemCounts is what an import holds, each count with its word: "1
// workspace, 3 libraries, ...".
func itemCounts(res *dynamo.ImportResult) string {
	return strings.Join([]string{
		doclib.Count(res.Workspaces, "workspace", "workspaces"), doclib.Count(res.Libraries, "library", "libraries"),
		doclib.Count(res.Documents, "document", "documents"), doclib.Count(res.Edges, "edge", "edges"),
		doclib.Count(res.Recordings, "recording", "recordings"), doclib.Count(res.Keys, "key", "keys"),
	}, ", ")
}
