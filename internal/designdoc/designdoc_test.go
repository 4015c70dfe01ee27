package designdoc

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sluicemedia/sluice/"

// update rewrites the table from go list instead of checking it:
// go test ./internal/designdoc -run TestImportsTable -update
var update = flag.Bool("update", false, "rewrite docs/design.md's imports table from go list")

// TestImportsTable: every package of the module has one row in docs/design.md's table of
// package imports, and each row names exactly the module's packages that package imports.
func TestImportsTable(t *testing.T) {
	root := moduleRoot(t)
	want := listImports(t, root)
	doc := filepath.Join(root, "docs", "design.md")
	if *update {
		writeTable(t, doc, want)
	}
	got := readTable(t, doc)
	for pkg, imps := range want {
		row, ok := got[pkg]
		switch {
		case !ok:
			t.Errorf("docs/design.md: no row for package %s (it imports %v)", pkg, imps)
		case !slices.Equal(row, imps):
			t.Errorf("docs/design.md: %s imports %v, the table says %v", pkg, imps, row)
		}
	}
	for pkg := range got {
		if _, ok := want[pkg]; !ok {
			t.Errorf("docs/design.md: row for %s, which go list does not know", pkg)
		}
	}
}

// moduleRoot is the folder of go.mod above the test's folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// listImports maps every package of the module (relative path) to the module's packages it
// imports, sorted.
func listImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		imps := []string{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				imps = append(imps, rel)
			}
		}
		slices.Sort(imps)
		m[strings.TrimPrefix(f[0], module)] = imps
	}
	if len(m) < 10 {
		t.Fatalf("go list gave %d packages: %s", len(m), out)
	}
	return m
}

// readTable reads the rows between the imports markers: | `pkg` | `a`, `b` | (— for none).
func readTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch line {
		case "<!-- imports:begin -->":
			in = true
			continue
		case "<!-- imports:end -->":
			in = false
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 {
			t.Fatalf("%s: row %q: want 2 cells", path, line)
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := rows[pkg]; dup {
			t.Errorf("%s: two rows for %s", path, pkg)
		}
		imps := []string{}
		for _, c := range strings.Split(cells[1], ",") {
			if c = strings.Trim(strings.TrimSpace(c), "`"); c != "" && c != "—" {
				imps = append(imps, c)
			}
		}
		slices.Sort(imps)
		rows[pkg] = imps
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows between <!-- imports:begin --> and <!-- imports:end -->", path)
	}
	return rows
}

// TestArrows: the dependency rules design.md states that depguard cannot say in one rule. A
// protocol imports no other protocol (only what protocols/internal holds, and its own
// subpackages), and nothing under protocols, packager or transcode imports internal/app.
func TestArrows(t *testing.T) {
	for pkg, imps := range listImports(t, moduleRoot(t)) {
		for _, imp := range imps {
			if layer(pkg) != "" && imp == "internal/app" {
				t.Errorf("%s imports internal/app: only cmd does", pkg)
			}
			if !strings.HasPrefix(pkg, "protocols/") || !strings.HasPrefix(imp, "protocols/") {
				continue
			}
			if !strings.HasPrefix(imp, "protocols/internal/") && protocolOf(imp) != protocolOf(pkg) {
				t.Errorf("%s imports %s: a protocol imports no other protocol (what they share goes to protocols/internal)", pkg, imp)
			}
		}
	}
}

// TestAppWiringFiles: design.md names, as the wiring they are, exactly the files of
// internal/app (tests aside) that run over 200 lines, so that a file growing past that is
// either drawn or split.
func TestAppWiringFiles(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "Its files over 200 lines are that wiring:", "What does the work"
	doc := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(doc, from)
	j := strings.Index(doc[max(i, 0):], to)
	if i < 0 || j < 0 {
		t.Fatalf("docs/design.md: no sentence %q ... %q", from, to)
	}
	named := doc[i : i+j]
	files, err := filepath.Glob(filepath.Join(root, "internal", "app", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	long := 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(src, []byte("\n"))
		listed := strings.Contains(named, "`"+name+"`")
		switch {
		case lines > 200 && !listed:
			t.Errorf("internal/app/%s has %d lines and docs/design.md does not name it as wiring: name it there, or move what is not wiring out", name, lines)
		case lines <= 200 && listed:
			t.Errorf("docs/design.md names internal/app/%s among the files over 200 lines; it has %d", name, lines)
		}
		if lines > 200 {
			long++
		}
	}
	if long == 0 {
		t.Error("no file of internal/app over 200 lines: the sentence in docs/design.md can go")
	}
}

// layer is the top folder of a product layer that pkg is in (protocols, packager, transcode),
// or "".
func layer(pkg string) string {
	top, _, _ := strings.Cut(pkg, "/")
	switch top {
	case "protocols", "packager", "transcode":
		return top
	}
	return ""
}

// protocolOf is the protocol a package under protocols/ belongs to: protocols/srt/link is srt's.
func protocolOf(pkg string) string {
	f := strings.Split(pkg, "/")
	if len(f) < 2 {
		return pkg
	}
	return f[1]
}

// writeTable replaces the rows between the imports markers of path with imports' rows.
func writeTable(t *testing.T, path string, imports map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- imports:begin -->\n", "<!-- imports:end -->"
	i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no imports markers", path)
	}
	var rows bytes.Buffer
	rows.WriteString("| package | imports (sluice packages) |\n|---|---|\n")
	pkgs := slices.Sorted(maps.Keys(imports))
	for _, pkg := range pkgs {
		cell := "—"
		if imps := imports[pkg]; len(imps) > 0 {
			cell = "`" + strings.Join(imps, "`, `") + "`"
		}
		fmt.Fprintf(&rows, "| `%s` | %s |\n", pkg, cell)
	}
	out := slices.Concat(b[:i+len(begin)], rows.Bytes(), b[j:])
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
