package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is the front door: it has to fit on a screen or two, and the
// depth lives in docs/, reached from the README's map.
const readmeMaxLines = 150

// TestReadmeFitsAScreen keeps the README an introduction rather than a
// manual: reference grows in docs/, where the map points.
func TestReadmeFitsAScreen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference to the docs page it belongs to and link it from the map", n, readmeMaxLines)
	}
}

// TestDocsReachableFromReadme: a page no link leads to is a page nobody
// reads, so every docs page must be reachable from README.md by following
// relative links (the map, and the pages it leads to).
func TestDocsReachableFromReadme(t *testing.T) {
	root := repoRoot(t)
	pages := docPages(t, root)
	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		for _, l := range pageLinks(t, root, page) {
			if l.target == "" || !strings.HasSuffix(l.target, ".md") || reached[l.target] {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, l.target)); err != nil {
				continue // TestDocLinksResolve reports it
			}
			reached[l.target] = true
			queue = append(queue, l.target)
		}
	}
	for _, p := range pages {
		if !reached[p] {
			t.Errorf("%s is reachable from no link starting at README.md: add it to README.md's Documentation map, or link it from a page the map reaches", p)
		}
	}
}

// TestDocLinksResolve: every relative link in README.md and docs/ names a
// file of the repository, and its #fragment, when it has one, a heading of
// that page (as GitHub makes anchors of headings).
func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	anchors := map[string]map[string]bool{}
	for _, page := range append([]string{"README.md"}, docPages(t, root)...) {
		for _, l := range pageLinks(t, root, page) {
			if l.target != "" {
				if _, err := os.Stat(filepath.Join(root, l.target)); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", page, l.line, l.raw, l.target)
					continue
				}
			}
			if l.fragment == "" {
				continue
			}
			file := l.target
			if file == "" {
				file = page
			}
			if !strings.HasSuffix(file, ".md") {
				continue
			}
			if anchors[file] == nil {
				anchors[file] = headingAnchors(t, root, file)
			}
			if !anchors[file][l.fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s", page, l.line, l.raw, file, l.fragment)
			}
		}
	}
}

// TestDocLinkParsing holds the link reader to cases whose answer is known,
// so the tests above cannot pass by reading no links at all.
func TestDocLinkParsing(t *testing.T) {
	text := "see [a](docs/a.md#x-y) and [b](https://example.com/b.md)\n" +
		"`[not](a-link.md)` but ![img](docs/p.png)\n" +
		"```sh\n[in](code.md)\n```\n" +
		"    [indented](code.md)\n" +
		"[self](#here)\n"
	var got []string
	for _, l := range parseLinks("docs/page.md", text) {
		got = append(got, l.target+"#"+l.fragment)
	}
	want := []string{"docs/docs/a.md#x-y", "docs/docs/p.png#", "#here"}
	if !slices.Equal(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
	for heading, want := range map[string]string{
		"## The verdict":                          "the-verdict",
		"### Durability log (live/wal)":           "durability-log-livewal",
		"## `pacer compare`: modes, and the demo": "pacer-compare-modes-and-the-demo",
		"### 1a. 1 : 2.2, plain SGD (α₀ = 0.1)":   "1a-1--22-plain-sgd-α₀--01",
	} {
		if got := slug(strings.TrimLeft(heading, "# ")); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

type docLink struct {
	raw      string // as written
	target   string // the file, relative to the repository's root; "" for the page itself
	fragment string // after '#', "" when none
	line     int
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	externalLink = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// docPages lists every Markdown page under docs/, relative to the root.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, _ := filepath.Rel(root, path)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages under docs/: %v", len(pages), pages)
	}
	return pages
}

func pageLinks(t *testing.T, root, page string) []docLink {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	return parseLinks(page, string(b))
}

// parseLinks returns the relative links of a Markdown page, leaving out
// code (fenced blocks, indented blocks, code spans), where brackets are
// not links.
func parseLinks(page, text string) []docLink {
	var out []docLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			raw := m[1]
			if externalLink.MatchString(raw) {
				continue
			}
			file, frag, _ := strings.Cut(raw, "#")
			l := docLink{raw: raw, fragment: frag, line: i + 1}
			if file != "" {
				l.target = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			out = append(out, l)
		}
	}
	return out
}

// headingAnchors is the set of anchors GitHub gives a page's headings:
// the slug, and for a repeated slug the slug with -1, -2, ….
func headingAnchors(t *testing.T, root, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, '-' and '_' kept, spaces made '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
