package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/rajatjindal/krew-release-bot/pkg/source"
	"github.com/sirupsen/logrus"
)

// runKrewManifest renders a krew-release-bot template with the bot's own
// code, as the bot renders it against a GitHub release, but offline: the
// archives its addURIAndSha downloads are read from -dist instead.
func runKrewManifest(args []string) error {
	fs := flag.NewFlagSet("krew-manifest", flag.ContinueOnError)
	tmpl := fs.String("template", ".krew.yaml", "krew-release-bot template")
	dist := fs.String("dist", "dist", "directory with the release's archives (goreleaser's dist/)")
	tag := fs.String("tag", "", "release tag, vX.Y.Z (the template's .TagName)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tag == "" {
		return errors.New("-tag is required (the release tag, e.g. -tag v0.1.0)")
	}
	manifest, err := renderKrew(*tmpl, *dist, *tag)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(manifest)
	return err
}

// renderKrew renders template for tag with krew-release-bot's
// source.RenderTemplate, serving the archives it downloads from dist by the
// URL's last element. Every archive of tag in dist must be named by the
// template exactly once, and no other.
func renderKrew(template, dist, tag string) ([]byte, error) {
	archives, err := filepath.Glob(filepath.Join(dist, binaryName+"_"+tag+"_*"))
	if err != nil {
		return nil, err
	}
	if len(archives) == 0 {
		return nil, fmt.Errorf("%s holds no archive of %s (%s_%s_*)", dist, tag, binaryName, tag)
	}
	fromDist := &distTransport{dir: dist, fetched: map[string]int{}}
	defer func(t http.RoundTripper) { http.DefaultTransport = t }(http.DefaultTransport)
	http.DefaultTransport = fromDist
	logrus.SetLevel(logrus.WarnLevel)
	manifest, err := source.RenderTemplate(template, source.ReleaseRequest{
		TagName: tag, PluginOwner: "kubectl-schedq", PluginRepo: "kubectl-schedq",
	})
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, a := range archives {
		switch name := filepath.Base(a); fromDist.fetched[name] {
		case 1:
		case 0:
			problems = append(problems, name+" is in "+dist+" but not in the manifest")
		default:
			problems = append(problems, fmt.Sprintf("%s is named by %d platforms", name, fromDist.fetched[name]))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return manifest, nil
}

// distTransport answers GETs with the file of dir the URL's last element
// names. A missing file is 410 Gone: the bot retries only on 404.
type distTransport struct {
	dir     string
	mu      sync.Mutex
	fetched map[string]int
}

func (t *distTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := path.Base(req.URL.Path)
	resp := &http.Response{Request: req, Header: http.Header{}, StatusCode: http.StatusOK, Status: "200 OK"}
	f, err := os.Open(filepath.Join(t.dir, name))
	if err != nil || strings.HasPrefix(name, ".") {
		if f != nil {
			f.Close()
		}
		resp.StatusCode, resp.Status = http.StatusGone, "410 Gone"
		resp.Body = io.NopCloser(strings.NewReader(name + " is not in " + t.dir))
		return resp, nil
	}
	t.mu.Lock()
	t.fetched[name]++
	t.mu.Unlock()
	resp.Body = f
	return resp, nil
}
