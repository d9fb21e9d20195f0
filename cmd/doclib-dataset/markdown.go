package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"go.yaml.in/yaml/v3"
)

// readMarkdown reads every .md file below dir, in name order, one document
// each. A file's library is its front matter's, or else the name of the
// folder it is in (dir itself for files at the top).
//
// A symbolic link below dir whose target is outside dir is refused, whatever
// it points to: the data set is made from what is in the folder. A link to a
// .md file inside dir is read as that file under the link's name; a link to a
// folder is not followed (its files are read where they are).
func readMarkdown(dir string) ([]doc, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, unreadable(dir, err)
	}
	if !st.IsDir() {
		return nil, usageError{fmt.Errorf("%s is a file; from-markdown takes a folder of .md files (for a CSV, use from-csv)", dir)}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, unreadable(dir, err)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, unreadable(dir, err)
	}
	walk := dir
	if lst, err := os.Lstat(dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		walk += string(filepath.Separator) // WalkDir walks the folder a link given as dir points to only so
	}
	var docs []doc
	err = filepath.WalkDir(walk, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return unreadable(path, err)
		}
		md := strings.EqualFold(filepath.Ext(path), ".md")
		read := path
		if e.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				if md {
					return fmt.Errorf("%s is a symbolic link that cannot be followed: %w", path, err)
				}
				return nil
			}
			if target, err = filepath.Abs(target); err != nil {
				return unreadable(path, err)
			}
			if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%s is a symbolic link to %s, outside %s; from-markdown reads only the folder it is given: copy the file in, or remove the link", path, target, dir)
			}
			if st, err := os.Stat(target); err != nil || st.IsDir() {
				return nil
			}
			read = target
		}
		if e.IsDir() || !md {
			return nil
		}
		if !utf8.ValidString(filepath.Base(filepath.Dir(path))) {
			return fmt.Errorf("%s: the folder name is not UTF-8, and it would be the library's name; rename the folder", path)
		}
		src, err := os.ReadFile(read)
		if err != nil {
			return unreadable(path, err)
		}
		d, err := markdownDoc(path, src)
		if err != nil {
			return err
		}
		if d.library == "" {
			d.library = filepath.Base(filepath.Dir(path))
		}
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s holds no .md files; write one file per document", dir)
	}
	return docs, nil
}

// frontMatterKeys are the keys a Markdown file's front matter may set.
var frontMatterKeys = []string{"library", "category", "tags", "applications"}

// markdownDoc reads one file: front matter between --- lines, the title from
// the first heading, the summary from the paragraphs before the steps, the
// steps from the first numbered list.
func markdownDoc(path string, src []byte) (doc, error) {
	d := doc{where: path}
	if err := checkUTF8(path, src); err != nil {
		return d, err
	}
	if err := checkNesting(path, src); err != nil {
		return d, err
	}
	body, offset, err := frontMatter(path, src, &d)
	if err != nil {
		return d, err
	}
	root := goldmark.New().Parser().Parse(text.NewReader(body))
	var summary []string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading:
			if d.title == "" {
				d.title = plain(n, body)
			}
		case *ast.Paragraph:
			if d.title != "" && d.steps == nil {
				summary = append(summary, plain(n, body))
			}
		case *ast.List:
			if n.IsOrdered() && d.steps == nil {
				for item := n.FirstChild(); item != nil; item = item.NextSibling() {
					d.steps = append(d.steps, plain(item, body))
				}
			}
		}
	}
	switch {
	case d.title == "":
		return d, fmt.Errorf("%s:%d: no heading; start the document with its title, such as \"# Reset a password\"", path, offset+1)
	case len(d.steps) == 0:
		return d, fmt.Errorf("%s: no numbered list; write the steps as one, such as \"1. Open the admin console\"", path)
	}
	d.summary = strings.Join(summary, "\n\n")
	return d, nil
}

// frontMatter reads the front matter into d and returns the body after it and
// how many lines it took.
func frontMatter(path string, src []byte, d *doc) (body []byte, lines int, err error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	rest, ok := bytes.CutPrefix(src, []byte("---\n"))
	if !ok {
		return src, 0, nil
	}
	head, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return nil, 0, fmt.Errorf("%s:1: the front matter that starts with --- has no closing --- line", path)
	}
	lines = bytes.Count(head, []byte("\n")) + 3
	var node yaml.Node
	if err := yaml.Unmarshal(head, &node); err != nil || len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("%s:2: the front matter is not a list of \"key: value\" lines (keys: %s)", path, strings.Join(frontMatterKeys, ", "))
	}
	m := node.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		key, val := m[i], m[i+1]
		line := key.Line + 1 // after the opening ---
		var list []string
		switch {
		case !slices.Contains(frontMatterKeys, key.Value):
			return nil, 0, fmt.Errorf("%s:%d: front matter key %q is not one of %s", path, line, key.Value, strings.Join(frontMatterKeys, ", "))
		case val.Kind == yaml.ScalarNode && (key.Value == "library" || key.Value == "category"):
		case val.Kind == yaml.ScalarNode:
			for _, s := range strings.Split(val.Value, ",") {
				if s = strings.TrimSpace(s); s != "" {
					list = append(list, s)
				}
			}
		case val.Kind == yaml.SequenceNode && key.Value != "library" && key.Value != "category":
			if val.Decode(&list) != nil {
				return nil, 0, fmt.Errorf("%s:%d: %s must be a list of words, such as [vpn, security]", path, line, key.Value)
			}
		default:
			return nil, 0, fmt.Errorf("%s:%d: %s must be one line of text", path, line, key.Value)
		}
		switch key.Value {
		case "library":
			d.library = val.Value
		case "category":
			d.category = val.Value
		case "tags":
			d.tags = list
		case "applications":
			d.applications = list
		}
	}
	return body, lines, nil
}

// plain is a node's text without its Markdown: inline marks dropped, nested
// blocks on lines of their own.
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if s, ok := t.(*ast.Text); ok {
					b.Write(s.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		default:
			if c.Type() == ast.TypeBlock && c != n && b.Len() > 0 {
				b.WriteByte('\n')
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}
