package data

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultClient bounds a download as a whole; the files are 30 MB at most.
var defaultClient = &http.Client{Timeout: 10 * time.Minute}

// maxDownload caps what one download may write, so a misbehaving server cannot fill the disk.
const maxDownload = 256 << 20

// downloadSet fetches the files of sp that dir does not hold yet, one by one; files completed
// by an earlier, interrupted run are kept.
func (l *Loader) downloadSet(ctx context.Context, sp idxSpec, base, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	client := l.Client
	if client == nil {
		client = defaultClient
	}
	base = strings.TrimSuffix(base, "/") + "/"
	for _, f := range sp.files {
		if _, ok := findFile(dir, f.base); ok {
			continue
		}
		name := f.base + ".gz"
		if err := download(ctx, client, base+name, filepath.Join(dir, name), f.md5); err != nil {
			return err
		}
	}
	return nil
}

// download fetches url into dst, verifying the MD5 of the bytes as they stream past. It writes a
// temporary file in dst's directory and renames it into place only after the sum matched, so
// an interrupted or corrupted download never leaves a file under the final name (rename is
// atomic within one file system).
func download(ctx context.Context, client *http.Client, url, dst, wantMD5 string) (err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".part-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if n > maxDownload {
		return fmt.Errorf("GET %s: larger than %d bytes", url, maxDownload)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantMD5 {
		return fmt.Errorf("GET %s: MD5 %s, want %s (%d bytes received)", url, got, wantMD5, n)
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
