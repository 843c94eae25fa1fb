package data

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// idxSpec describes an MNIST-format data set: four IDX files with known MD5 sums at an official
// address.
type idxSpec struct {
	name    string
	classes int
	baseURL string
	files   [4]remoteFile // train images, train labels, test images, test labels
}

// remoteFile is a file name without its ".gz" (the download is always the .gz, whose MD5 is md5).
type remoteFile struct{ base, md5 string }

var fashionMNIST = idxSpec{
	name:    "fashion-mnist",
	classes: 10,
	baseURL: "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
	files: [4]remoteFile{
		{"train-images-idx3-ubyte", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"},
		{"train-labels-idx1-ubyte", "25c81989df183df01b3e8a0aad5dffbe"},
		{"t10k-images-idx3-ubyte", "bef4ecab320f06d8554ea6380940ec79"},
		{"t10k-labels-idx1-ubyte", "bb300cfdad3c16e7a12a480ee83cd310"},
	},
}

// mnist uses the mirror torchvision downloads from, since the original host no longer serves
// the files reliably; the MD5 sums are those of the original files.
var mnist = idxSpec{
	name:    "mnist",
	classes: 10,
	baseURL: "https://ossci-datasets.s3.amazonaws.com/mnist/",
	files: [4]remoteFile{
		{"train-images-idx3-ubyte", "f68b3c2dcbeaaa9fbdd348bbdeb94873"},
		{"train-labels-idx1-ubyte", "d53e105ee54ea40749a09fcbcd1e9432"},
		{"t10k-images-idx3-ubyte", "9fb629c4189551a2d022fa330f9573f3"},
		{"t10k-labels-idx1-ubyte", "ec29112dd5afa0611ce80d1b7f02629c"},
	},
}

func (sp idxSpec) bases() []string {
	out := make([]string, len(sp.files))
	for i, f := range sp.files {
		out[i] = f.base
	}
	return out
}

// find returns the four file paths if dir holds all of them.
func (sp idxSpec) find(dir string) ([4]string, bool) {
	var paths [4]string
	for i, f := range sp.files {
		p, ok := findFile(dir, f.base)
		if !ok {
			return paths, false
		}
		paths[i] = p
	}
	return paths, true
}

// loadIDX walks the resolution order. Files that are found but malformed are an error at once
// rather than a reason to try the next place: silently training on other data than the user
// pointed at would be worse than stopping.
func (l *Loader) loadIDX(ctx context.Context, sp idxSpec) (*Dataset, error) {
	var tried []string
	for _, p := range l.places(sp.name) {
		if len(p.dirs) == 0 {
			tried = append(tried, p.label)
			continue
		}
		var reasons []string
		for _, d := range p.dirs {
			if paths, ok := sp.find(d); ok {
				return readIDXSet(sp, d, paths)
			}
			reasons = append(reasons, missingReason(d, sp.bases()))
		}
		tried = append(tried, p.describe(reasons))
	}
	cache, err := l.cacheDir(sp.name)
	if err != nil {
		tried = append(tried, "user cache ("+err.Error()+")")
		return nil, notFound(sp.name, tried)
	}
	if paths, ok := sp.find(cache); ok {
		return readIDXSet(sp, cache, paths)
	}
	tried = append(tried, "user cache "+cache+" ("+missingReason(cache, sp.bases())+")")
	base := l.BaseURL
	if base == "" {
		base = sp.baseURL
	}
	if l.NoDownload {
		tried = append(tried, "download from "+base+" (disabled)")
		return nil, notFound(sp.name, tried)
	}
	if err := l.downloadSet(ctx, sp, base, cache); err != nil {
		tried = append(tried, "download from "+base+" into "+cache+" ("+err.Error()+")")
		return nil, notFound(sp.name, tried)
	}
	paths, ok := sp.find(cache)
	if !ok {
		return nil, fmt.Errorf("data: %s: download into %s finished but the files are missing", sp.name, cache)
	}
	ds, err := readIDXSet(sp, cache, paths)
	if err == nil {
		ds.Source = strings.TrimSuffix(base, "/") + "/ via " + cache
	}
	return ds, err
}

func readIDXSet(sp idxSpec, dir string, paths [4]string) (*Dataset, error) {
	var parsed [4]*IDX
	for i, p := range paths {
		m, err := readIDXFile(p)
		if err != nil {
			return nil, fmt.Errorf("data: %s: %w", sp.name, err)
		}
		parsed[i] = m
	}
	train, err := idxSet(sp, "train", parsed[0], parsed[1], paths[0], paths[1])
	if err != nil {
		return nil, err
	}
	test, err := idxSet(sp, "test", parsed[2], parsed[3], paths[2], paths[3])
	if err != nil {
		return nil, err
	}
	if train.Dim != test.Dim {
		return nil, fmt.Errorf("data: %s: train images have %d features, test images %d", sp.name, train.Dim, test.Dim)
	}
	return &Dataset{Train: train, Test: test, Source: dir}, nil
}

func readIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadIDX(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func idxSet(sp idxSpec, split string, images, labels *IDX, imagePath, labelPath string) (*Set, error) {
	if len(images.Dims) != 3 {
		return nil, fmt.Errorf("data: %s: %s: %w: images have dims %v, want N×rows×cols", sp.name, imagePath, ErrIDX, images.Dims)
	}
	x, n, dim := idxImages(images)
	y, err := idxLabels(labels, sp.classes)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %s: %w", sp.name, labelPath, err)
	}
	if len(y) != n {
		return nil, fmt.Errorf("data: %s: %s has %d images but %s has %d labels", sp.name, imagePath, n, labelPath, len(y))
	}
	return &Set{X: x, Y: y, N: n, Dim: dim, Classes: sp.classes, Name: sp.name + "/" + split}, nil
}
