package data

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Names lists the data sets Load knows, in the order the error message gives them.
var Names = []string{"fashion-mnist", "mnist", "cifar10", "synthetic"}

// Loader finds and reads a data set. The zero value is ready to use; every zero field means the
// documented default, and the fields exist so tests (and unusual deployments) can point each
// step of the resolution order somewhere else.
type Loader struct {
	// Dir is the --data-dir flag: tried first, either holding the files itself or a
	// subdirectory named after the data set. Empty means not given.
	Dir string
	// Getenv reads $PACER_DATA (same layout as Dir). Nil means os.Getenv.
	Getenv func(string) string
	// LocalDir replaces "./data": the data set is looked for in LocalDir/<name>.
	LocalDir string
	// SystemDir replaces "/usr/share/datasets" (Debian's dataset-* packages).
	SystemDir string
	// CacheDir replaces os.UserCacheDir()/pacer: downloads go to CacheDir/<name>.
	CacheDir string
	// NoDownload turns off the last step, the download from the official address.
	NoDownload bool
	// Client performs downloads. Nil means a client with a 10-minute overall timeout.
	Client *http.Client
	// BaseURL replaces the official address (a trailing slash is optional).
	BaseURL string
	// Synthetic configures the "synthetic" data set; zero fields take defaults.
	Synthetic SyntheticConfig
}

// Load reads the named data set with the default resolution order, dir being --data-dir.
func Load(name, dir string) (*Dataset, error) {
	return (&Loader{Dir: dir}).Load(context.Background(), name)
}

// Load reads the named data set: fashion-mnist, mnist, cifar10 or synthetic.
func (l *Loader) Load(ctx context.Context, name string) (*Dataset, error) {
	var (
		ds  *Dataset
		err error
	)
	switch strings.ToLower(name) {
	case "fashion-mnist", "fashion_mnist", "fashionmnist":
		ds, err = l.loadIDX(ctx, fashionMNIST)
	case "mnist":
		ds, err = l.loadIDX(ctx, mnist)
	case "cifar10", "cifar-10":
		ds, err = l.loadCIFAR10()
	case "synthetic":
		ds, err = NewSynthetic(l.Synthetic)
	default:
		return nil, fmt.Errorf("data: unknown data set %q; valid names: %s", name, strings.Join(Names, ", "))
	}
	if err != nil {
		return nil, err
	}
	for _, s := range []*Set{ds.Train, ds.Test} {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%v (from %s)", err, ds.Source)
		}
	}
	return ds, nil
}

// Info is a data set's shape as its files declare it, read without loading the samples.
type Info struct {
	Name          string // the data set, e.g. "fashion-mnist"
	TrainN, TestN int    // samples in each split
	Dim, Classes  int    // features per sample, label classes
	Source        string // where the files are, as Dataset.Source
}

// Info finds the named data set as Load does and reads only what its files declare: the four
// IDX headers (checked against the set's shape and cross-checked, as Load checks them), the
// sizes of the CIFAR-10 batch files, the synthetic set's configuration. A process that needs
// only the counts (a server shard) calls it instead of Load, and allocates next to nothing.
func (l *Loader) Info(ctx context.Context, name string) (*Info, error) {
	switch strings.ToLower(name) {
	case "fashion-mnist", "fashion_mnist", "fashionmnist":
		return l.infoIDX(ctx, fashionMNIST)
	case "mnist":
		return l.infoIDX(ctx, mnist)
	case "cifar10", "cifar-10":
		return l.infoCIFAR10()
	case "synthetic":
		c := l.Synthetic.withDefaults()
		if err := c.validate(); err != nil {
			return nil, err
		}
		return &Info{Name: "synthetic", TrainN: c.Train, TestN: c.Test, Dim: c.Dim, Classes: c.Classes, Source: c.source()}, nil
	}
	return nil, fmt.Errorf("data: unknown data set %q; valid names: %s", name, strings.Join(Names, ", "))
}

// place is one step of the resolution order: a label for the error message and the directories
// it stands for (a root may hold the files directly or in a subdirectory named after the set).
type place struct {
	label string
	dirs  []string
}

// describe is the line for p in the not-found error; reasons[i] is why p.dirs[i] failed.
func (p place) describe(reasons []string) string {
	if len(p.dirs) == 1 {
		return p.label + " (" + reasons[0] + ")"
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = p.dirs[i] + ": " + r
	}
	return p.label + " (" + strings.Join(parts, "; ") + ")"
}

func (l *Loader) places(name string) []place {
	getenv := l.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	rooted := func(label, root string) place {
		if root == "" {
			return place{label: label + " (not set)"}
		}
		return place{label: fmt.Sprintf("%s %s", label, root), dirs: []string{root, filepath.Join(root, name)}}
	}
	local := l.LocalDir
	if local == "" {
		local = "data"
	}
	system := l.SystemDir
	if system == "" {
		system = "/usr/share/datasets"
	}
	return []place{
		rooted("--data-dir", l.Dir),
		rooted("$PACER_DATA", getenv("PACER_DATA")),
		{label: filepath.Join(local, name), dirs: []string{filepath.Join(local, name)}},
		{label: filepath.Join(system, name), dirs: []string{filepath.Join(system, name)}},
	}
}

func (l *Loader) cacheDir(name string) (string, error) {
	if l.CacheDir != "" {
		return filepath.Join(l.CacheDir, name), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "pacer", name), nil
}

// notFound is the error when every place failed; it lists each with the reason.
func notFound(name string, tried []string) error {
	return fmt.Errorf("data: %s not found; tried, in order:\n  %s", name, strings.Join(tried, "\n  "))
}

// missingReason describes why dir does not hold the wanted files.
func missingReason(dir string, want []string) string {
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "no such directory"
		}
		return err.Error()
	} else if !st.IsDir() {
		return "not a directory"
	}
	var miss []string
	for _, f := range want {
		if _, ok := findFile(dir, f); !ok {
			miss = append(miss, f)
		}
	}
	return "missing " + strings.Join(miss, ", ")
}

// findFile looks for base, accepting it gzip-compressed (base.gz) or plain.
func findFile(dir, base string) (string, bool) {
	for _, p := range []string{filepath.Join(dir, base+".gz"), filepath.Join(dir, base)} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
