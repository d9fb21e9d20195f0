package main

import (
	"strings"
	"testing"
)

// An unknown subcommand, at the root or under a group, is a usage error (exit
// 2) with cobra's suggestion, not the group's help and success; a group alone
// still shows its help.
func TestUnknownSubcommands(t *testing.T) {
	for _, c := range []struct {
		args     []string
		code     int
		says     []string
		helpOnly bool // the answer is the help, on stdout
	}{
		{[]string{"keys", "crate"}, exitUsage, []string{`unknown command "crate" for "doclib-admin keys"`, "Did you mean this?\n\tcreate", "Run 'doclib-admin keys --help'"}, false},
		{[]string{"keys", "--workspace", "ws_a", "lst"}, exitUsage, []string{`unknown command "lst"`, "\tlist"}, false},
		{[]string{"workspaces", "shwo"}, exitUsage, []string{`unknown command "shwo" for "doclib-admin workspaces"`, "\tshow"}, false},
		{[]string{"improt"}, exitUsage, []string{`unknown command "improt" for "doclib-admin"`, "\timport", "Run 'doclib-admin --help'"}, false},
		{[]string{"keys"}, exitOK, []string{"Available Commands", "create"}, true},
		{[]string{"workspaces"}, exitOK, []string{"Available Commands", "set-credit"}, true},
		{nil, exitOK, []string{"Available Commands", "create-table"}, true},
	} {
		code, out, errs := admin(t, c.args...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d:\n%s%s", c.args, code, c.code, out, errs)
			continue
		}
		got := errs
		if c.helpOnly {
			got = out
		} else if strings.Contains(out, "Available Commands") {
			t.Errorf("%q: printed the help as well as the error:\n%s", c.args, out)
		}
		for _, s := range c.says {
			if !strings.Contains(got, s) {
				t.Errorf("%q: want %q in:\n%s", c.args, s, got)
			}
		}
	}
}
