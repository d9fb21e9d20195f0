// Package readmetest checks that every command in README.md's shell blocks can
// run as written on a fresh clone: its program exists, and the flags it passes
// to the project's own programs are ones they take. Its test runs the check
// on the real README; Check is here, apart from it, so that a test can feed it
// a README that is wrong on purpose.
package readmetest

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Command is one command of a shell block, as the shell would split it.
type Command struct {
	Line int      // the README line it starts on
	Env  []string // NAME=value assignments before the program
	Args []string // the program and its arguments, quotes removed, nothing expanded
}

// Commands returns the commands of the README's shell blocks: those fenced
// with sh, bash, shell or no language at all.
func Commands(readme string) ([]Command, error) {
	var out []Command
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "```")
		if !ok {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		switch strings.TrimSpace(lang) {
		case "", "sh", "bash", "shell":
			cmds, err := split(lines[start:min(i, len(lines))], start+1)
			if err != nil {
				return nil, err
			}
			out = append(out, cmds...)
		}
	}
	return out, nil
}

// split reads a block's lines into commands: a backslash at a line's end
// continues it, # starts a comment outside quotes, and ;, &, &&, | and ||
// end a command. <placeholders> stay words, as a reader fills them in.
func split(lines []string, firstLine int) ([]Command, error) {
	var (
		out   []Command
		cur   Command
		word  strings.Builder
		inW   bool
		quote rune
		line  int
	)
	endWord := func() {
		if inW {
			if len(cur.Args) == 0 {
				cur.Line = line
			}
			cur.Args = append(cur.Args, word.String())
		}
		word.Reset()
		inW = false
	}
	endCmd := func() {
		endWord()
		for len(cur.Args) > 0 && isAssignment(cur.Args[0]) {
			cur.Env = append(cur.Env, cur.Args[0])
			cur.Args = cur.Args[1:]
		}
		if len(cur.Args) > 0 || len(cur.Env) > 0 {
			out = append(out, cur)
		}
		cur = Command{}
	}
	for n, text := range lines {
		if len(cur.Args) == 0 && !inW {
			line = firstLine + n
		}
		rs := []rune(text)
		continued := false
		for j := 0; j < len(rs); j++ {
			r := rs[j]
			switch {
			case quote != 0:
				if r == quote {
					quote = 0
				} else {
					word.WriteRune(r)
				}
			case r == '\'' || r == '"':
				quote, inW = r, true
			case r == '\\' && j == len(rs)-1:
				continued = true
			case r == '\\':
				j++
				word.WriteRune(rs[j])
				inW = true
			case r == '#' && !inW:
				j = len(rs)
			case r == ' ' || r == '\t':
				endWord()
			case r == '&' && j > 0 && rs[j-1] == '>': // 2>&1
				word.WriteRune(r)
			case r == ';' || r == '&' || r == '|':
				endCmd()
				if j+1 < len(rs) && rs[j+1] == r {
					j++
				}
			default:
				word.WriteRune(r)
				inW = true
			}
		}
		if quote != 0 {
			return nil, fmt.Errorf("README.md:%d: a quote is not closed", firstLine+n)
		}
		if !continued {
			endCmd()
		} else {
			endWord()
		}
	}
	endCmd()
	return out, nil
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssignment(w string) bool { return assignment.MatchString(w) }

// builtins are shell words that need no program.
var builtins = map[string]bool{"export": true, "cd": true, "source": true, ".": true, "set": true,
	"unset": true, "echo": true, "wait": true, "kill": true}

// Env is what Check needs to know of the machine.
type Env struct {
	Root string // the repository's folder
	// LookPath finds a program on PATH.
	LookPath func(name string) (string, error)
	// Package tells a Go package's name ("main" for a program) by its path
	// relative to Root, such as "./cmd/doclib"; an error when there is none.
	Package func(pkg string) (name string, err error)
	// Help returns what a main package's program prints for args + --help;
	// an error when it refuses them.
	Help func(pkg string, args []string) (string, error)
	// ToolsInstalled says that the install script has run, so the paths it
	// creates must exist; when false they are not looked at.
	ToolsInstalled bool
}

// installScripts are the commands that create .tools/.
var installScripts = map[string]bool{"./scripts/tools": true, "scripts/tools": true, "./scripts/test": true, "scripts/test": true}

// Check returns a problem for each command of the README that cannot run as
// written, in the user's terms.
func Check(readme string, env Env) ([]string, error) {
	cmds, err := Commands(readme)
	if err != nil {
		return nil, err
	}
	prereq := prerequisites(readme)
	installed := map[string]string{} // a name go install made -> its package
	toolsRan := false
	var problems []string
	bad := func(c Command, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("README.md:%d: %s: %s", c.Line, strings.Join(c.Args, " "), fmt.Sprintf(format, args...)))
	}
	for _, c := range cmds {
		if len(c.Args) == 0 || builtins[c.Args[0]] || isRedirect(c.Args[0]) {
			continue
		}
		prog := c.Args[0]
		switch {
		case prog == "go":
			checkGo(c, env, installed, bad)
		case installScripts[prog]:
			toolsRan = true
			checkFile(c, env, prog, bad)
		case strings.HasPrefix(prog, ".tools/"):
			if !toolsRan {
				bad(c, "%s exists only after ./scripts/tools has run; run it in an earlier command", prog)
			} else if env.ToolsInstalled {
				checkFile(c, env, prog, bad)
			}
		case strings.Contains(prog, "/"):
			checkFile(c, env, prog, bad)
		case installed[prog] != "":
			checkFlags(c, env, installed[prog], c.Args[1:], bad)
		default:
			if _, err := env.LookPath(prog); err != nil && !strings.Contains(prereq, "`"+prog+"`") {
				bad(c, "%s is not on PATH and the README's prerequisites do not name it (as `%s`)", prog, prog)
			}
		}
	}
	return problems, nil
}

// checkGo checks go run, install, test, generate and build of the project's
// packages.
func checkGo(c Command, env Env, installed map[string]string, bad func(Command, string, ...any)) {
	if len(c.Args) < 2 {
		return
	}
	sub := c.Args[1]
	for i, a := range c.Args[2:] {
		if !strings.HasPrefix(a, "./") {
			continue
		}
		name, err := env.Package(a)
		switch {
		case err != nil:
			bad(c, "%s is not a package of this module", a)
		case (sub == "run" || sub == "install") && name != "main":
			bad(c, "%s is package %s, not a program", a, name)
		case sub == "run":
			checkFlags(c, env, a, c.Args[3+i:], bad)
		case sub == "install":
			installed[path.Base(a)] = a
		}
		if sub == "run" {
			return // what follows is the program's
		}
	}
}

// checkFile checks that a path in the repository exists and can be run.
func checkFile(c Command, env Env, p string, bad func(Command, string, ...any)) {
	st, err := os.Stat(filepath.Join(env.Root, filepath.FromSlash(p)))
	switch {
	case err != nil:
		bad(c, "%s does not exist", p)
	case st.IsDir() || st.Mode()&0o111 == 0:
		bad(c, "%s is not an executable file", p)
	}
}

// checkFlags asks the program for the help of its subcommand (the words before
// the first flag) and looks for every flag given in it.
func checkFlags(c Command, env Env, pkg string, args []string, bad func(Command, string, ...any)) {
	var words, flags []string
	for _, a := range args {
		switch {
		case isRedirect(a):
		case strings.HasPrefix(a, "-") && a != "-" && a != "--":
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			flags = append(flags, name)
		case len(flags) == 0:
			words = append(words, a)
		}
	}
	help, err := env.Help(pkg, words)
	if err != nil {
		bad(c, "%s %s --help fails: %v", path.Base(pkg), strings.Join(words, " "), err)
		return
	}
	for _, f := range flags {
		re := regexp.MustCompile(`(^|[\s,\[])--?` + regexp.QuoteMeta(f) + `([\s=,\]]|$)`)
		if !re.MatchString(help) {
			bad(c, "%s has no flag --%s (not in its --help)", strings.TrimSpace(path.Base(pkg)+" "+strings.Join(words, " ")), f)
		}
	}
}

func isRedirect(w string) bool {
	return regexp.MustCompile(`^[0-9]*(>|>>|<)(&[0-9])?$`).MatchString(w)
}

// prerequisites is the text of the README's prerequisite lists: from each line
// that says "Prerequisites" to the next blank line.
func prerequisites(readme string) string {
	var b strings.Builder
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(strings.ToLower(line), "prerequisites"):
			in = true
		case strings.TrimSpace(line) == "":
			in = false
		}
		if in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
