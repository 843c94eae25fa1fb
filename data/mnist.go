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
	// rows×cols images, at most maxTrain training and maxTest test samples: the shape the
	// set's files must declare, checked on their headers before any body is read, so a
	// hostile file cannot make a process decompress and convert more than the real set.
	rows, cols        int
	maxTrain, maxTest int
}

// shapes are the bounds of the four files, in the order of files.
func (sp idxSpec) shapes() [4]IDXShape {
	img := []int{sp.rows, sp.cols}
	return [4]IDXShape{{MaxN: sp.maxTrain, Tail: img}, {MaxN: sp.maxTrain}, {MaxN: sp.maxTest, Tail: img}, {MaxN: sp.maxTest}}
}

// remoteFile is a file name without its ".gz" (the download is always the .gz, whose MD5 is md5).
type remoteFile struct{ base, md5 string }

var fashionMNIST = idxSpec{
	name:    "fashion-mnist",
	classes: 10,
	baseURL: "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
	rows:    28, cols: 28, maxTrain: 60000, maxTest: 10000,
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
	rows:    28, cols: 28, maxTrain: 60000, maxTest: 10000,
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

// loadIDX reads the set from the first place of the resolution order that holds it.
func (l *Loader) loadIDX(ctx context.Context, sp idxSpec) (*Dataset, error) {
	dir, paths, source, err := l.findIDX(ctx, sp)
	if err != nil {
		return nil, err
	}
	ds, err := readIDXSet(sp, dir, paths)
	if err != nil {
		return nil, err
	}
	ds.Source = source
	return ds, nil
}

// infoIDX reads only the four headers, checked and cross-checked as loadIDX checks them.
func (l *Loader) infoIDX(ctx context.Context, sp idxSpec) (*Info, error) {
	_, paths, source, err := l.findIDX(ctx, sp)
	if err != nil {
		return nil, err
	}
	hdrs, err := readIDXHeaders(sp, paths)
	if err != nil {
		return nil, err
	}
	return &Info{Name: sp.name, TrainN: hdrs[0][0], TestN: hdrs[2][0], Dim: sp.rows * sp.cols, Classes: sp.classes, Source: source}, nil
}

// findIDX walks the resolution order and returns the directory holding the four files, their
// paths and a description of where they came from. Files that are found but malformed are an
// error at once rather than a reason to try the next place: silently training on other data
// than the user pointed at would be worse than stopping.
func (l *Loader) findIDX(ctx context.Context, sp idxSpec) (dir string, paths [4]string, source string, err error) {
	var tried []string
	for _, p := range l.places(sp.name) {
		if len(p.dirs) == 0 {
			tried = append(tried, p.label)
			continue
		}
		var reasons []string
		for _, d := range p.dirs {
			if paths, ok := sp.find(d); ok {
				return d, paths, d, nil
			}
			reasons = append(reasons, missingReason(d, sp.bases()))
		}
		tried = append(tried, p.describe(reasons))
	}
	cache, err := l.cacheDir(sp.name)
	if err != nil {
		tried = append(tried, "user cache ("+err.Error()+")")
		return "", paths, "", notFound(sp.name, tried)
	}
	if paths, ok := sp.find(cache); ok {
		return cache, paths, cache, nil
	}
	tried = append(tried, "user cache "+cache+" ("+missingReason(cache, sp.bases())+")")
	base := l.BaseURL
	if base == "" {
		base = sp.baseURL
	}
	if l.NoDownload {
		tried = append(tried, "download from "+base+" (disabled)")
		return "", paths, "", notFound(sp.name, tried)
	}
	if err := l.downloadSet(ctx, sp, base, cache); err != nil {
		tried = append(tried, "download from "+base+" into "+cache+" ("+err.Error()+")")
		return "", paths, "", notFound(sp.name, tried)
	}
	paths, ok := sp.find(cache)
	if !ok {
		return "", paths, "", fmt.Errorf("data: %s: download into %s finished but the files are missing", sp.name, cache)
	}
	return cache, paths, strings.TrimSuffix(base, "/") + "/ via " + cache, nil
}

// readIDXHeaders reads the four headers, checks each against the set's shape and the label
// counts against the image counts, all before any body is read.
func readIDXHeaders(sp idxSpec, paths [4]string) ([4][]int, error) {
	var hdrs [4][]int
	shapes := sp.shapes()
	for i, p := range paths {
		dims, err := readIDXFileHeader(p)
		if err == nil {
			err = shapes[i].check(dims)
		}
		if err != nil {
			return hdrs, fmt.Errorf("data: %s: %s: %w", sp.name, p, err)
		}
		hdrs[i] = dims
	}
	for i := 0; i < 4; i += 2 {
		if hdrs[i][0] != hdrs[i+1][0] {
			return hdrs, fmt.Errorf("data: %s: %s has %d images but %s has %d labels", sp.name, paths[i], hdrs[i][0], paths[i+1], hdrs[i+1][0])
		}
	}
	return hdrs, nil
}

func readIDXFileHeader(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIDXHeader(f)
}

// readIDXSet reads the four files, their headers checked and cross-checked first, so a file
// that declares more than the set has is refused before anything is decompressed.
func readIDXSet(sp idxSpec, dir string, paths [4]string) (*Dataset, error) {
	if _, err := readIDXHeaders(sp, paths); err != nil {
		return nil, err
	}
	var parsed [4]*IDX
	for i, p := range paths {
		m, err := readIDXFile(p, sp.shapes()[i])
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

func readIDXFile(path string, shape IDXShape) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadIDXShape(f, shape)
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
