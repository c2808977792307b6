package tests

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeExamples holds README.md's Go code to the examples that CI
// compiles and runs: each ```go block's lines must appear, in order and
// contiguous, in the body of some Example function in the repository's
// _test.go files. Lines are compared with runs of white space collapsed to
// one space and trimmed, as gofmt realigns comments. A block edited
// without its example, or an example without its block, fails here.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block")
	}
	bodies := exampleBodies(t, "..")
	if len(bodies) == 0 {
		t.Fatal("no Example function found in the repository's _test.go files")
	}
	for _, b := range blocks {
		found := false
		for _, body := range bodies {
			if containsRun(body.lines, b.lines) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md:%d: this ```go block is in no Example function's body (%d examples searched); make it match one, as gofmt writes it:\n%s",
				b.line, len(bodies), strings.Join(b.raw, "\n"))
		}
	}
}

type codeBlock struct {
	line  int      // README.md line of the block's first code line
	raw   []string // the lines as written
	lines []string // normalized
}

var fence = regexp.MustCompile("^\\s*```")

// goBlocks returns the ```go blocks of a Markdown text.
func goBlocks(md string) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```go":
			cur = &codeBlock{line: i + 2}
		case cur != nil && fence.MatchString(l):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.raw = append(cur.raw, l)
			cur.lines = append(cur.lines, normalize(l))
		}
	}
	return blocks
}

type exampleBody struct {
	name  string
	lines []string
}

// exampleBodies parses every _test.go file under root and returns the
// normalized lines of each Example function's body.
func exampleBodies(t *testing.T, root string) []exampleBody {
	t.Helper()
	var out []exampleBody
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			start := fset.Position(fn.Body.Lbrace).Offset + 1
			end := fset.Position(fn.Body.Rbrace).Offset
			var lines []string
			for _, l := range bytes.Split(src[start:end], []byte("\n")) {
				lines = append(lines, normalize(string(l)))
			}
			out = append(out, exampleBody{name: path + ":" + fn.Name.Name, lines: lines})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// normalize collapses each run of white space in l to one space and trims
// it.
func normalize(l string) string {
	return strings.Join(strings.Fields(l), " ")
}

// containsRun reports whether want appears in have as a contiguous run.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		match := true
		for j, w := range want {
			if have[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
