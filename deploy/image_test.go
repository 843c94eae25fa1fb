package deploy_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImageArchive (issue 35): scripts/image builds the image every
// manifest names, offline, as an OCI archive: tagged with pacer's version,
// a static pacer as its entrypoint, run as the manifests' uid, with the
// data set at the path pacer reads by default and a tar for kubectl cp.
func TestImageArchive(t *testing.T) {
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Skip("needs Debian's buildah (apt-get install buildah busybox-static; scripts/setup installs them as root)")
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); err != nil {
		t.Skip("needs Debian's dataset-fashion-mnist, which the image carries")
	}
	v := version(t)
	archive := filepath.Join(t.TempDir(), "pacer.oci.tar")
	if out, err := exec.Command("../scripts/image", archive).CombinedOutput(); err != nil {
		t.Fatalf("scripts/image: %v\n%s", err, out)
	}
	files := readTar(t, archive, nil)
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	unmarshal(t, files["index.json"], &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "pacer:"+v {
		t.Fatalf("index.json %s: want one image tagged pacer:%s", files["index.json"], v)
	}
	var manifest struct {
		Config struct{ Digest string } `json:"config"`
		Layers []struct {
			MediaType, Digest string
		} `json:"layers"`
	}
	unmarshal(t, files[blob(index.Manifests[0].Digest)], &manifest)
	var config struct {
		OS, Architecture string
		Config           struct {
			User       string
			Entrypoint []string
			Env        []string
			Labels     map[string]string
		} `json:"config"`
	}
	unmarshal(t, files[blob(manifest.Config.Digest)], &config)
	c := config.Config
	if config.OS != "linux" || c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/pacer"}) ||
		!slices.Contains(c.Env, "PATH=/usr/local/bin:/usr/bin") || c.Labels["org.opencontainers.image.version"] != v {
		t.Errorf("image config %+v: want linux, user 65532:65532, entrypoint /usr/local/bin/pacer, pacer on the PATH, version %s", config, v)
	}
	// The image's files: one layer, as the archive holds it.
	if len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != "application/vnd.oci.image.layer.v1.tar" {
		t.Fatalf("layers %+v: want one uncompressed layer", manifest.Layers)
	}
	layer := filepath.Join(t.TempDir(), "layer.tar")
	if err := os.WriteFile(layer, files[blob(manifest.Layers[0].Digest)], 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{"usr/local/bin/pacer", "usr/bin/tar"}
	fs := readTar(t, layer, keep)
	for _, name := range []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"} {
		if _, ok := fs["usr/share/datasets/fashion-mnist/"+name]; !ok {
			t.Errorf("the image has no usr/share/datasets/fashion-mnist/%s", name)
		}
	}
	for _, name := range keep {
		// Static: the image has no libc, so no interpreter may be named.
		f, err := elf.NewFile(bytes.NewReader(fs[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
			t.Errorf("%s is linked dynamically: the image has no libc", name)
		}
	}
	bin := filepath.Join(t.TempDir(), "pacer")
	if err := os.WriteFile(bin, fs["usr/local/bin/pacer"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "pacer v"+v+" ") {
		t.Errorf("the image's pacer version: %q, %v; want pacer v%s", out, err, v)
	}
}

func blob(digest string) string { return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:") }

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// readTar reads an archive's regular files: the contents of those in keep
// (all when keep is nil), the names of all.
func readTar(t *testing.T, path string, keep []string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Clean(h.Name), "/")
		if h.Typeflag != tar.TypeReg {
			continue
		}
		out[name] = nil
		if keep == nil || slices.Contains(keep, name) {
			if out[name], err = io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
		}
	}
}
