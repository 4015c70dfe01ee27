package metrics

import (
	"os"
	"strings"
	"testing"
)

// Markers of the generated table in docs/metrics.md.
const (
	tableBegin = "<!-- metrics table: generated from internal/metrics.Catalog, checked by TestCatalogDocumented -->"
	tableEnd   = "<!-- end of metrics table -->"
)

// catalogTable renders the catalog as the table docs/metrics.md holds.
func catalogTable() string {
	var b strings.Builder
	b.WriteString("| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range Catalog() {
		labels := "(none)"
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		b.WriteString("| `" + m.Name + "` | " + m.Type + " | " + labels + " | " + m.Help + " |\n")
	}
	return b.String()
}

// TestCatalogDocumented: docs/metrics.md lists exactly the catalog, so the list cannot drift
// from the code. On a change, paste the table this test prints.
func TestCatalogDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/metrics.md has no table between %q and %q", tableBegin, tableEnd)
	}
	got := strings.TrimSpace(s[i+len(tableBegin) : j])
	if want := strings.TrimSpace(catalogTable()); got != want {
		t.Fatalf("docs/metrics.md's table differs from the catalog; it should read:\n%s", want)
	}
}
