package mcpserver

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEToolTable keeps the README's tool table in step with the
// catalog: every tool once, with its toolset ("opt-in" for none).
func TestREADMEToolTable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (inspect|manage|execute|teardown|opt-in) \\|")
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		if _, dup := got[m[1]]; dup {
			t.Errorf("README lists %s twice", m[1])
		}
		got[m[1]] = m[2]
	}
	want := map[string]string{}
	for name, tl := range catalog {
		ts := tl.spec().toolset
		if ts == OptIn {
			ts = "opt-in"
		}
		want[name] = ts
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README tool table differs from the catalog (-catalog +README); edit the table under ## Tools:\n%s", diff)
	}
}

// TestREADMEConfiguration keeps the README's configuration reference in
// step with --help (internal/config/usage.txt): every flag and variable
// --help names, retired variables included, is in that section.
func TestREADMEConfiguration(t *testing.T) {
	readme := readDoc(t, "../README.md")
	usage := readDoc(t, "../internal/config/usage.txt")
	section := docSection(t, readme, "## Configuration reference")
	names := regexp.MustCompile(`--[a-z][a-z-]*|LIBTMUX_[A-Z_]+`).FindAllString(usage, -1)
	if len(names) < 30 {
		t.Fatalf("found %d flags and variables in usage.txt; want at least 30: %q", len(names), names)
	}
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		// A name followed by another name character is a longer name
		// (--socket in --socket-name): look for the name on its own.
		own := regexp.MustCompile(regexp.QuoteMeta(name) + `(?:[^A-Za-z_-]|$)`)
		if !own.MatchString(section) {
			t.Errorf("--help names %s; the README's configuration reference does not: add it to the table under ## Configuration reference", name)
		}
	}
}

// TestDocLinks checks every relative link in the README and docs/*.md: the
// file it names exists and, for a link with #anchor, the target has a
// heading with that anchor (GitHub's rule: lower case, punctuation dropped,
// spaces to hyphens).
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"../README.md"}, docs...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, file := range files {
		for _, m := range link.FindAllStringSubmatch(stripCode(readDoc(t, file)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			checked++
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %q: an anchor in a file that is not markdown", file, target)
				continue
			}
			if !slices.Contains(anchors(readDoc(t, dest)), anchor) {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s (headings: %q)", file, target, dest, anchor, anchors(readDoc(t, dest)))
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links; want at least 20 (is the link pattern still right?)", checked)
	}
}

// TestPackageLayout keeps docs/package-layout.md's table in step with the
// tree: every directory holding Go files is named in its first column, and
// every name there is a directory.
func TestPackageLayout(t *testing.T) {
	layout := readDoc(t, "../docs/package-layout.md")
	listed := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\|")
	name := regexp.MustCompile("`([a-z0-9/_-]+)`")
	for _, r := range row.FindAllStringSubmatch(layout, -1) {
		for _, n := range name.FindAllStringSubmatch(r[1], -1) {
			listed[n[1]] = true
		}
	}
	var dirs []string
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel("..", filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs = slices.Compact(slices.Sorted(slices.Values(dirs)))
	for _, d := range dirs {
		if !listed[d] {
			t.Errorf("package %s is not in docs/package-layout.md; add its row", d)
		}
	}
	for n := range listed {
		if !slices.Contains(dirs, n) {
			t.Errorf("docs/package-layout.md lists %s, which holds no Go files; remove or rename its row", n)
		}
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docSection returns the text from heading to the next heading of the same
// or a higher level.
func docSection(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no heading %q", heading)
	}
	rest := doc[i+1+len(heading):]
	level := strings.Repeat("#", strings.Count(strings.Fields(heading)[0], "#"))
	next := regexp.MustCompile("(?m)^#{1," + strconv.Itoa(len(level)) + "} ")
	if loc := next.FindStringIndex(rest); loc != nil {
		rest = rest[:loc[0]]
	}
	return rest
}

// stripCode drops fenced code blocks, where "](" is not a link and "#" is
// not a heading.
func stripCode(doc string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// anchors lists the anchors GitHub gives the headings of a markdown file.
func anchors(doc string) []string {
	var out []string
	heading := regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	for _, m := range heading.FindAllStringSubmatch(stripCode(doc), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDocFilePaths: every repository file a doc names in backquotes
// (`mcpserver/gate.go`, `shellsetup/setup.zsh`) exists, so a walk through
// the code (docs/architecture.md) follows the tree as it is. A design on
// paper (docs/macos-tmux-run.md) names files that do not exist yet.
func TestDocFilePaths(t *testing.T) {
	t.Parallel()
	docs, _ := filepath.Glob("../docs/*.md")
	docs = slices.DeleteFunc(append(docs, "../README.md"), func(d string) bool { return strings.HasSuffix(d, "macos-tmux-run.md") })
	path := regexp.MustCompile("`((?:[a-z0-9_.-]+/)+[a-zA-Z0-9_.-]+\\.(?:go|zsh|json|conf|mjs|yaml))`")
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range path.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
				t.Errorf("%s names %s, which is not in the repository", filepath.Base(doc), m[1])
			}
		}
	}
}
