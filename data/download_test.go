package data

import (
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeSpec is an MNIST-format spec whose MD5 sums are those of files, so the download path can
// be exercised end to end against a loopback server.
func fakeSpec(files map[string][]byte) idxSpec {
	sp := idxSpec{name: "fake-mnist", classes: 10, baseURL: "http://192.0.2.1/never-used/", rows: 28, cols: 28, maxTrain: 60000, maxTest: 10000}
	for i, f := range fashionMNIST.files {
		sum := md5.Sum(files[f.base+".gz"])
		sp.files[i] = remoteFile{f.base, hex.EncodeToString(sum[:])}
	}
	return sp
}

// serve answers GET /<name> from files (or from override), counting requests.
func serve(t *testing.T, files map[string][]byte, override func(name string) ([]byte, int)) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		name := strings.TrimPrefix(r.URL.Path, "/")
		body, code := files[name], http.StatusOK
		if override != nil {
			body, code = override(name)
		}
		if body == nil && code == http.StatusOK {
			code = http.StatusNotFound
		}
		w.WriteHeader(code)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func cacheEntries(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestDownloadVerifiesAndCaches(t *testing.T) {
	files := fakeIDXFiles(t, 9, 4)
	sp := fakeSpec(files)
	srv, hits := serve(t, files, nil)
	l, _ := isolated(t)
	l.NoDownload = false
	l.BaseURL = srv.URL // no trailing slash: the loader adds it
	l.Client = srv.Client()

	ds, err := l.loadIDX(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Train.N != 9 || ds.Test.N != 4 || !strings.HasPrefix(ds.Source, srv.URL) {
		t.Fatalf("N=%d/%d source %q", ds.Train.N, ds.Test.N, ds.Source)
	}
	if hits.Load() != 4 {
		t.Fatalf("%d requests, want 4", hits.Load())
	}
	cache := filepath.Join(l.CacheDir, sp.name)
	if got := cacheEntries(t, cache); len(got) != 4 {
		t.Fatalf("cache holds %v, want exactly the four files", got)
	}
	// The second load finds the cache and never asks the server.
	srv.Close()
	ds, err = l.loadIDX(context.Background(), sp)
	if err != nil || ds.Source != cache {
		t.Fatalf("reload: source %v err %v", ds, err)
	}
	if hits.Load() != 4 {
		t.Fatalf("cached load made requests")
	}
}

func TestDownloadResumesMissingFilesOnly(t *testing.T) {
	files := fakeIDXFiles(t, 5, 3)
	sp := fakeSpec(files)
	srv, hits := serve(t, files, nil)
	l, _ := isolated(t)
	l.NoDownload, l.BaseURL, l.Client = false, srv.URL+"/", srv.Client()
	cache := filepath.Join(l.CacheDir, sp.name)
	writeFiles(t, cache, map[string][]byte{"train-images-idx3-ubyte.gz": files["train-images-idx3-ubyte.gz"]})
	if _, err := l.loadIDX(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 3 {
		t.Fatalf("%d requests, want 3 (one file was cached)", hits.Load())
	}
}

func TestDownloadFailuresLeaveNoFile(t *testing.T) {
	files := fakeIDXFiles(t, 5, 3)
	sp := fakeSpec(files)
	target := "t10k-images-idx3-ubyte.gz"
	cases := map[string]struct {
		override func(string) ([]byte, int)
		want     string
	}{
		"md5 mismatch": {func(n string) ([]byte, int) {
			if n == target {
				b := append([]byte{}, files[n]...)
				b[len(b)-1] ^= 1
				return b, http.StatusOK
			}
			return files[n], http.StatusOK
		}, "MD5"},
		"http 404": {func(n string) ([]byte, int) {
			if n == target {
				return nil, http.StatusNotFound
			}
			return files[n], http.StatusOK
		}, "404"},
		"truncated body": {func(n string) ([]byte, int) {
			if n == target {
				return files[n][:10], http.StatusOK
			}
			return files[n], http.StatusOK
		}, "MD5"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			srv, _ := serve(t, files, c.override)
			l, _ := isolated(t)
			l.NoDownload, l.BaseURL, l.Client = false, srv.URL, srv.Client()
			_, err := l.loadIDX(context.Background(), sp)
			if err == nil {
				t.Fatal("bad download accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), target) ||
				!strings.Contains(err.Error(), "not found; tried") {
				t.Fatalf("error lacks %q or %s: %v", c.want, target, err)
			}
			for _, e := range cacheEntries(t, filepath.Join(l.CacheDir, sp.name)) {
				if e == target || strings.Contains(e, ".part") {
					t.Fatalf("failed download left %s in the cache", e)
				}
			}
		})
	}
}

func TestDownloadUnreachableServer(t *testing.T) {
	srv, _ := serve(t, nil, nil)
	url := srv.URL
	srv.Close() // nothing listens there any more
	l, _ := isolated(t)
	l.NoDownload, l.BaseURL = false, url
	_, err := l.loadIDX(context.Background(), fakeSpec(fakeIDXFiles(t, 1, 1)))
	if err == nil || !strings.Contains(err.Error(), "download from "+url) {
		t.Fatalf("unreachable server: %v", err)
	}
}

// TestDebianFilesAreUpstreamContent ties the real files to the upstream release: Debian
// recompresses the .gz files (so their MD5 differs from the built-in download sums), but the
// decompressed IDX content must be byte-identical to upstream's.
func TestDebianFilesAreUpstreamContent(t *testing.T) {
	dir := "/usr/share/datasets/fashion-mnist"
	upstream := map[string]string{ // MD5 of the decompressed upstream files
		"train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
		"train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
		"t10k-images-idx3-ubyte":  "8181f5470baa50b63fa0f6fddb340f0a",
		"t10k-labels-idx1-ubyte":  "15d484375f8d13e6eb1aabb0c3f46965",
	}
	for base, want := range upstream {
		f, err := os.Open(filepath.Join(dir, base+".gz"))
		if os.IsNotExist(err) {
			t.Skipf("Fashion-MNIST not installed in %s (apt-get install dataset-fashion-mnist)", dir)
		}
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		h := md5.New()
		if _, err := io.Copy(h, zr); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s: decompressed MD5 %s, upstream %s", base, got, want)
		}
	}
}
