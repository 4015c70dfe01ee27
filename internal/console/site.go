// Package console serves sluice's web console (at / on the API port) and every player's watch
// page (at / on its vod_port and /hls/<id>/ on the API port) from files embedded in the binary.
//
// The embedded folder ui holds our own pages (ui/pages, rendered with html/template), scripts
// and styles as written, and ui/vendor, where `make console` copies hls.js and dash.js from npm.
// Every file outside ui/pages is an asset served under /assets/<version>/<path>, where version
// is a hash of all of them: an asset URL never changes meaning, so it is cached as immutable,
// while the pages that name them are revalidated on every load.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed all:ui
var embedded embed.FS

// vendorFiles are the third-party files `make console` copies into ui/vendor; without them the
// console and the watch pages answer 503.
var vendorFiles = []string{"vendor/hls.min.js", "vendor/hls.worker.js", "vendor/dash.mediaplayer.min.js"}

// NotBuilt is the body of the 503 answered while the vendor files are missing.
const NotBuilt = "console assets not built: run make console (it copies hls.js and dash.js from npm into internal/console/ui/vendor), then build again\n"

// AssetPrefix is the path under which every asset is served, followed by the version.
const AssetPrefix = "/assets/"

// Site holds the embedded files, read once.
type Site struct {
	assets  map[string]*asset // by path under ui, e.g. "js/app.js"
	version string            // hash of every asset, the second segment of asset URLs
	built   bool              // the vendor files are present
	missing []string          // vendor files that are not
	index   []byte            // the rendered console page
	watch   *template.Template
}

// New reads the embedded files.
func New() (*Site, error) { return newSite(embedded) }

func newSite(fsys fs.FS) (*Site, error) {
	root, err := fs.Sub(fsys, "ui")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	s := &Site{assets: map[string]*asset{}}
	var names []string
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, "pages/") {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console: read embedded files: %w", err)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, p := range names {
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return nil, fmt.Errorf("console: read %s: %w", p, err)
		}
		s.assets[p] = newAsset(p, body)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(body))
		h.Write(body)
	}
	s.version = hex.EncodeToString(h.Sum(nil))[:16]
	for _, v := range vendorFiles {
		if s.assets[v] == nil {
			s.missing = append(s.missing, v)
		}
	}
	s.built = len(s.missing) == 0

	idx, err := template.ParseFS(root, "pages/index.html")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	var b bytes.Buffer
	if err := idx.Execute(&b, map[string]string{"Assets": s.assetBase()}); err != nil {
		return nil, fmt.Errorf("console: render index.html: %w", err)
	}
	s.index = b.Bytes()
	s.watch, err = template.ParseFS(root, "pages/watch.html")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return s, nil
}

// Built reports whether the vendor files are present; Missing lists those that are not.
func (s *Site) Built() bool { return s.built }

// Missing lists the vendor files `make console` has not copied.
func (s *Site) Missing() []string { return slices.Clone(s.missing) }

// Version is the asset version, the hash in asset URLs.
func (s *Site) Version() string { return s.version }

// assetBase is the URL path every asset is under, without a trailing slash.
func (s *Site) assetBase() string { return AssetPrefix + s.version }

// lookup finds the asset of a request path /assets/<version>/<name>; a path of another
// version is not found, so that an old page cannot cache a new file as the old one.
func (s *Site) lookup(urlPath string) *asset {
	rest, ok := strings.CutPrefix(urlPath, AssetPrefix+s.version+"/")
	if !ok || rest == "" || path.Clean("/"+rest) != "/"+rest {
		return nil
	}
	return s.assets[rest]
}
