// Command sluice is the media server: `sluice serve` (the default) runs it; `sluice token`,
// `sluice passwd` and `sluice version` help operate it. `sluice --help` lists every setting.
package main

import (
	"os"

	"github.com/sluicemedia/sluice/internal/app"
)

func main() {
	reexecWithMadvFree()
	os.Exit(app.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
