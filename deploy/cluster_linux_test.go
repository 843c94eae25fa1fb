//go:build linux

package deploy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kubeflow "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nsnet"
	"github.com/pacer-ps/pacer/runstats"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// This file: each manifest's pods as processes on hosts of network
// namespaces (package nsnet), as a kubelet would start them: each
// container's own command and arguments, its environment resolved as the
// kubelet resolves it ($(VAR) references, the downward API's fields, the
// Secrets' keys; TF_CONFIG as the training operator sets it), the cluster's
// DNS names in each host's /etc/hosts, the probes sent from a host of
// their own to the ports the manifest names. What a process here cannot
// have is a mount namespace per pod: a volume's mount path in an argument
// or a variable becomes the test's directory for that volume (a claim's,
// an ephemeral volume's, a Secret's files), and the image's data set is the
// host's, at the same path (scripts/image copies it from there).

// jobLength shortens the manifests' 5-epoch job to two epochs of 4,096
// samples; flags given last win.
var jobLength = []string{"--train-limit=4096", "--test-limit=500", "--epochs=2", "--eval-every=0.5"}

// kpod is one pod of a manifest as the test runs it.
type kpod struct {
	name, host string
	spec       *corev1.PodSpec
	server     bool
	// fields are the downward API's values (fieldRef paths).
	fields map[string]string
	// env is what the kubelet or an operator adds (HOSTNAME, TF_CONFIG).
	env []string
	// volumes maps a volume's name to its directory (claims, ephemeral
	// volumes; Secrets are the cluster's).
	volumes map[string]string
}

// kcluster is the namespaces, names and Secrets every pod of a job sees.
type kcluster struct {
	t       *testing.T
	net     *nsnet.Net
	bin     string
	dns     map[string]string // name → pod host
	secrets map[string]map[string][]byte
	dir     string
}

// newCluster makes a host per pod and one for the kubelet's probes,
// and the Secrets the manifests ask for: the tokens and a CA and
// certificate naming names.
func newCluster(t *testing.T, pods []*kpod, names []string) *kcluster {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces (package nsnet); run the tests as root to include it")
	}
	if err := nsnet.Check(); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); err != nil {
		t.Skip("needs Debian's dataset-fashion-mnist, which the image carries at the same path")
	}
	sweepHosts()
	c := &kcluster{t: t, dns: map[string]string{}, dir: t.TempDir()}
	hosts := []nsnet.Host{{Name: "kubelet"}}
	for _, p := range pods {
		hosts = append(hosts, nsnet.Host{Name: p.host})
	}
	var err error
	if c.net, err = nsnet.New(hosts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.net.Close() })
	// The image's pacer: static, as scripts/image builds it.
	c.bin = filepath.Join(c.dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(c.bin, "pacer"), "./cmd/pacer")
	build.Dir, build.Env = "..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	crt, key, ca := certificate(t, names)
	c.secrets = map[string]map[string][]byte{
		"pacer-token":         {"token": []byte("job-token-" + rand.Text())},
		"pacer-control-token": {"token": []byte("control-token-" + rand.Text())},
		"pacer-tls":           {"tls.crt": crt, "tls.key": key, "ca.crt": ca},
	}
	return c
}

// sweepHosts removes the hosts files of namespaces whose test was killed
// before its cleanup (nsnet removes their namespaces): each is named
// after its process, pacer-PID-….
func sweepHosts() {
	dirs, _ := filepath.Glob("/etc/netns/pacer-*")
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "pacer-%d-", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

// resolve names the pods' hosts in every namespace's /etc/hosts (ip netns
// exec mounts /etc/netns/NS/hosts over it), as the cluster's DNS would.
func (c *kcluster) resolve(pods []*kpod) {
	var b strings.Builder
	b.WriteString("127.0.0.1 localhost\n")
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range c.dns {
			if !yield(n) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s %s\n", c.net.Addr(c.dns[name]), name)
	}
	for _, host := range append([]string{"kubelet"}, hostsOf(pods)...) {
		dir := filepath.Join("/etc/netns", c.net.Namespace(host))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.t.Fatal(err)
		}
		c.t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(b.String()), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
}

func hostsOf(pods []*kpod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.host)
	}
	return out
}

// kvar is a $(VAR) reference, which the kubelet expands in env values,
// commands and arguments from the variables defined before it.
var kvar = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func expand(s string, env map[string]string) string {
	return kvar.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m // undefined: left as written, as the kubelet does
	})
}

// command is pod p's argv and environment, as the kubelet would run its
// container, with each mount path replaced by the test's directory.
func (c *kcluster) command(p *kpod) ([]string, []string) {
	t := c.t
	ctr := p.spec.Containers[0]
	env := map[string]string{"PATH": c.bin, "HOSTNAME": p.name}
	var list []string
	set := func(k, v string) {
		env[k] = v
		list = append(list, k+"="+v)
	}
	set("PATH", c.bin)
	set("HOSTNAME", p.name)
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		set(k, v)
	}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			set(e.Name, expand(e.Value, env))
		case e.ValueFrom.FieldRef != nil:
			v, ok := p.fields[e.ValueFrom.FieldRef.FieldPath]
			if !ok {
				t.Fatalf("%s: %s: the downward API's %q is not one this test gives", p.name, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			set(e.Name, v)
		case e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			v, ok := c.secrets[r.Name][r.Key]
			if !ok {
				t.Fatalf("%s: %s: no Secret %s with key %s (the manifest's comment says which to create)", p.name, e.Name, r.Name, r.Key)
			}
			set(e.Name, string(v))
		default:
			t.Fatalf("%s: %s: a source this test does not give", p.name, e.Name)
		}
	}
	mounts := c.mounts(p, env)
	var argv []string
	for _, a := range append(slices.Clone(ctr.Command), ctr.Args...) {
		argv = append(argv, remount(expand(a, env), mounts))
	}
	for i, kv := range list {
		list[i] = remount(kv, mounts)
	}
	if p.server {
		argv = append(argv, jobLength...)
	}
	return argv, list
}

// mounts maps each of the container's mount paths to a directory or file
// of the test, longest path first.
func (c *kcluster) mounts(p *kpod, env map[string]string) [][2]string {
	t := c.t
	var out [][2]string
	for _, m := range p.spec.Containers[0].VolumeMounts {
		var v *corev1.Volume
		for i := range p.spec.Volumes {
			if p.spec.Volumes[i].Name == m.Name {
				v = &p.spec.Volumes[i]
			}
		}
		var dir string
		switch {
		case v != nil && v.Secret != nil:
			dir = filepath.Join(c.dir, "secret", p.name, m.Name)
			keys := map[string]string{}
			for k := range c.secrets[v.Secret.SecretName] {
				keys[k] = k
			}
			if len(v.Secret.Items) > 0 {
				keys = map[string]string{}
				for _, it := range v.Secret.Items {
					keys[it.Key] = it.Path
				}
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for k, path := range keys {
				b, ok := c.secrets[v.Secret.SecretName][k]
				if !ok {
					t.Fatalf("%s: volume %s: no Secret %s with key %s", p.name, m.Name, v.Secret.SecretName, k)
				}
				if err := os.WriteFile(filepath.Join(dir, path), b, 0o400); err != nil {
					t.Fatal(err)
				}
			}
		case p.volumes[m.Name] != "":
			dir = p.volumes[m.Name]
		default:
			t.Fatalf("%s: volume %s: not one this test gives (a claim, an ephemeral volume or a Secret)", p.name, m.Name)
		}
		if m.SubPathExpr != "" {
			dir = filepath.Join(dir, expand(m.SubPathExpr, env))
		} else if m.SubPath != "" {
			dir = filepath.Join(dir, m.SubPath)
		}
		if v == nil || v.Secret == nil {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, [2]string{m.MountPath, dir})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return out
}

// remount replaces the first mount path in s (a path, a flag's value, a
// variable's) with its directory.
func remount(s string, mounts [][2]string) string {
	for _, m := range mounts {
		i := strings.Index(s, m[0])
		if i < 0 {
			continue
		}
		if rest := s[i+len(m[0]):]; rest == "" || rest[0] == '/' {
			return s[:i] + m[1] + rest
		}
	}
	return s
}

// kproc is a running pod's process.
type kproc struct {
	pod  *kpod
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (c *kcluster) start(p *kpod) *kproc {
	argv, env := c.command(p)
	cmd := c.net.Command(p.host, argv...)
	cmd.Env = env
	r := &kproc{pod: p, cmd: cmd, log: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("%s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		r.done <- cmd.Wait() // read by the test, at most once
		close(exited)
	}()
	c.t.Cleanup(func() {
		cmd.Process.Kill() // whatever still runs (a failure)
		<-exited
	})
	return r
}

// probe sends the kubelet's GET to the port the container's probe names,
// from the kubelet's host.
func (c *kcluster) probe(ctx context.Context, p *kpod, pr *corev1.Probe) (int, error) {
	port := 0
	for _, cp := range p.spec.Containers[0].Ports {
		if cp.Name == pr.HTTPGet.Port.String() || fmt.Sprint(cp.ContainerPort) == pr.HTTPGet.Port.String() {
			port = int(cp.ContainerPort)
		}
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return c.net.Dial(ctx, "kubelet", addr)
	}}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d%s", c.net.Addr(p.host), port, pr.HTTPGet.Path), nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// run starts the servers, waits until each is live and ready by its own
// probes, starts the workers, and waits for every worker to exit 0 and
// for shard 0's summary.json and model.npz in out (shard 0's directory
// for its --out); the servers serve on until the test stops them with
// SIGTERM, after which each must exit 0 with its checkpoint in ckpt(i).
func (c *kcluster) run(pods []*kpod, out string, ckpt func(i int) string) (runstats.Run, *modelfile.Model) {
	t := c.t
	c.resolve(pods)
	var servers, workers []*kproc
	for _, p := range pods {
		if p.server {
			servers = append(servers, c.start(p))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard: the job ends by itself
	defer cancel()
	for _, s := range servers {
		for _, pr := range []*corev1.Probe{s.pod.spec.Containers[0].LivenessProbe, s.pod.spec.Containers[0].ReadinessProbe} {
			// Polled as the kubelet polls; the bound is the guard's.
			for code, err := 0, error(nil); code != http.StatusOK; {
				if code, err = c.probe(ctx, s.pod, pr); ctx.Err() != nil {
					t.Fatalf("%s: %s never answered 200 (last %d, %v)\n%s", s.pod.name, pr.HTTPGet.Path, code, err, s.log.String())
				}
				select {
				case err := <-s.done:
					t.Fatalf("%s exited before it was ready: %v\n%s", s.pod.name, err, s.log.String())
				case <-time.After(50 * time.Millisecond): // the probe's pace: an HTTP endpoint sends no event when it turns ready
				}
			}
		}
	}
	for _, p := range pods {
		if !p.server {
			workers = append(workers, c.start(p))
		}
	}
	logs := func() string {
		var b strings.Builder
		for _, r := range append(slices.Clone(servers), workers...) {
			fmt.Fprintf(&b, "== %s\n%s", r.pod.name, r.log.String())
		}
		return b.String()
	}
	for _, w := range workers {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("%s exited: %v\n%s", w.pod.name, err, logs())
			}
		case <-ctx.Done():
			t.Fatalf("%s still running after %s\n%s", w.pod.name, 3*time.Minute, logs())
		}
	}
	// Shard 0 writes both after the workers have left: polled, the
	// server giving no other notice to a process outside it.
	for _, f := range []string{"summary.json", "model.npz"} {
		for {
			if _, err := os.Stat(filepath.Join(out, f)); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("no %s in shard 0's %s\n%s", f, out, logs())
			case err := <-servers[0].done:
				t.Fatalf("shard 0 exited before it wrote %s: %v\n%s", f, err, logs())
			case <-time.After(50 * time.Millisecond): // the poll's pace: a file written by another process gives no event
			}
		}
	}
	for _, s := range servers {
		select {
		case err := <-s.done:
			t.Fatalf("%s exited after the job (%v): a pod that exits is restarted; it should serve on\n%s", s.pod.name, err, logs())
		default:
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	for i, s := range servers {
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("%s exited %v on SIGTERM\n%s", s.pod.name, err, s.log.String())
			}
		case <-ctx.Done():
			t.Fatalf("%s did not stop on SIGTERM\n%s", s.pod.name, s.log.String())
		}
		names, _ := filepath.Glob(filepath.Join(ckpt(i), "shard-*.ckpt"))
		if len(names) != 1 || filepath.Base(names[0]) != fmt.Sprintf("shard-%d.ckpt", i) {
			t.Errorf("%s's volume holds checkpoints %v: want its own shard-%d.ckpt only", s.pod.name, names, i)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run runstats.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	m, err := modelfile.ReadNPZ(filepath.Join(out, "model.npz"))
	if err != nil {
		t.Fatal(err)
	}
	// The model file is what the summary measured: the same accuracy on
	// the same test samples, by pacer eval.
	ev, err := exec.Command(filepath.Join(c.bin, "pacer"), "eval", "--model-file", filepath.Join(out, "model.npz"), "--test-limit", "500").Output()
	if err != nil {
		t.Fatalf("pacer eval: %v: %s", err, ev)
	}
	if want := fmt.Sprintf("test accuracy %.4f ", run.FinalAccuracy); !strings.HasPrefix(string(ev), want) {
		t.Errorf("pacer eval of model.npz says %q; the summary's final accuracy is %.4f", ev, run.FinalAccuracy)
	}
	t.Logf("%d pushes, %d evaluations, final accuracy %.4f in %.1f s; model %s, %d parameters", run.Pushes, len(run.Curve), run.FinalAccuracy, run.Seconds, m.Name(), m.NumParams())
	return run, m
}

// checkJob checks a finished job's summary and model against its shape.
func checkJob(t *testing.T, run runstats.Run, m *modelfile.Model, workers, shards int) {
	t.Helper()
	if run.Workers != workers || run.Shards != shards || run.Updates == 0 || len(run.Curve) == 0 || run.NoAccuracy != "" {
		t.Errorf("summary: %d workers, %d shards, %d updates, %d evaluations (%q): want a %d-worker, %d-shard job that trained and was evaluated",
			run.Workers, run.Shards, run.Updates, len(run.Curve), run.NoAccuracy, workers, shards)
	}
	if run.FinalAccuracy < 0.2 {
		t.Errorf("final accuracy %.4f: the job did not learn (chance is 0.1; a short SSP job of this size ended at 0.41-0.60 in six runs)", run.FinalAccuracy)
	}
	if m.Name() != "mlp" {
		t.Errorf("model.npz holds %s, want the job's mlp", m.Name())
	}
}

// certificate makes a CA and a server certificate naming names.
func certificate(t *testing.T, names []string) (crt, key, ca []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pacer test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// find returns the manifest's object of type T named name.
func find[T any](t *testing.T, name string) T {
	t.Helper()
	for _, o := range manifests(t) {
		if v, ok := o.v.(T); ok && o.name == name {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T %s in deploy/", zero, name)
	return zero
}

// TestStatefulSetJobRuns (issue 35): deploy/kubernetes/pacer.yaml's
// StatefulSet and Indexed Job, as pods on hosts of their own: the shards
// find their index in their host name and each other by the headless
// Service's names, the workers their id in the completion index; the job
// ends with shard 0's summary and model on its own volume while the
// shards serve on, as a StatefulSet's must.
func TestStatefulSetJobRuns(t *testing.T) {
	sts := find[*appsv1.StatefulSet](t, "pacer-shard")
	job := find[*batchv1.Job](t, "pacer-worker")
	shards, workers := int(*sts.Spec.Replicas), int(*job.Spec.Completions)
	var pods []*kpod
	var names []string
	dns := map[string]string{}
	for i := range shards {
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		host := fmt.Sprintf("s%d", i)
		p := &kpod{name: name, host: host, spec: &sts.Spec.Template.Spec, server: true,
			fields: map[string]string{"metadata.name": name}, volumes: map[string]string{}}
		for _, vct := range sts.Spec.VolumeClaimTemplates {
			p.volumes[vct.Name] = filepath.Join(t.TempDir(), vct.Name+"-"+name) // the claim <template>-<pod>
		}
		pods = append(pods, p)
		names = append(names, name+"."+sts.Spec.ServiceName)
		dns[name+"."+sts.Spec.ServiceName] = host
	}
	for i := range workers {
		name := fmt.Sprintf("%s-%d-x%d", job.Name, i, i)
		pods = append(pods, &kpod{name: name, host: fmt.Sprintf("w%d", i), spec: &job.Spec.Template.Spec,
			fields: map[string]string{"metadata.name": name, "metadata.annotations['batch.kubernetes.io/job-completion-index']": fmt.Sprint(i)}})
	}
	c := newCluster(t, pods, names)
	c.dns = dns
	for _, p := range pods {
		p.fields["status.podIP"] = c.net.Addr(p.host)
	}
	run, m := c.run(pods, filepath.Join(pods[0].volumes["ckpt"], "out"), func(i int) string { return pods[i].volumes["ckpt"] })
	checkJob(t, run, m, workers, shards)
}

// TestTFJobRuns (issue 35): deploy/kubeflow/tfjob.yaml's PS and Worker
// replicas with TF_CONFIG as the training operator sets it, the PS
// replicas sharing one ReadWriteMany claim, a directory each.
func TestTFJobRuns(t *testing.T) {
	tf := find[*kubeflow.TFJob](t, "pacer-fmnist")
	ps, wk := tf.Spec.TFReplicaSpecs[kubeflow.TFJobReplicaTypePS], tf.Spec.TFReplicaSpecs[kubeflow.TFJobReplicaTypeWorker]
	shards, workers := int(*ps.Replicas), int(*wk.Replicas)
	cluster := map[string][]string{}
	dns := map[string]string{}
	var names []string
	host := func(typ string, i int) string { return fmt.Sprintf("%s%d", typ[:1], i) }
	for _, r := range []struct {
		typ string
		n   int
	}{{"ps", shards}, {"worker", workers}} {
		for i := range r.n {
			// The operator's Service per replica: <job>-<type>-<i>.<namespace>.svc.
			name := fmt.Sprintf("%s-%s-%d.default.svc", tf.Name, r.typ, i)
			cluster[r.typ] = append(cluster[r.typ], name+":2222")
			dns[name] = host(r.typ, i)
			if r.typ == "ps" {
				names = append(names, name)
			}
		}
	}
	claim := t.TempDir() // pacer-checkpoints, shared
	var pods []*kpod
	for _, r := range []struct {
		typ  string
		n    int
		spec *corev1.PodSpec
	}{{"ps", shards, &ps.Template.Spec}, {"worker", workers, &wk.Template.Spec}} {
		for i := range r.n {
			name := fmt.Sprintf("%s-%s-%d", tf.Name, r.typ, i)
			conf, _ := json.Marshal(map[string]any{"cluster": cluster, "task": map[string]any{"type": r.typ, "index": i}})
			pods = append(pods, &kpod{name: name, host: host(r.typ, i), spec: r.spec, server: r.typ == "ps",
				fields: map[string]string{"metadata.name": name}, env: []string{"TF_CONFIG=" + string(conf)},
				volumes: map[string]string{"ckpt": claim}})
		}
	}
	c := newCluster(t, pods, names)
	c.dns = dns
	for _, p := range pods {
		p.fields["status.podIP"] = c.net.Addr(p.host)
	}
	run, m := c.run(pods, filepath.Join(claim, pods[0].name, "out"), func(i int) string { return filepath.Join(claim, pods[i].name) })
	checkJob(t, run, m, workers, shards)
}

// TestTrainerRuntimeRuns (issue 35): deploy/kubeflow/trainer.yaml's
// ClusterTrainingRuntime as JobSet would make its pods for the TrainJob:
// names from JobSet's labels, each shard on an ephemeral volume of its
// own, the certificate checked against the one server name every
// dialler asks for.
func TestTrainerRuntimeRuns(t *testing.T) {
	rt := find[*trainer.ClusterTrainingRuntime](t, "pacer")
	tj := find[*trainer.TrainJob](t, "pacer-fmnist")
	if tj.Spec.RuntimeRef.Name != rt.Name {
		t.Fatalf("TrainJob %s runs %s, not the runtime %s", tj.Name, tj.Spec.RuntimeRef.Name, rt.Name)
	}
	dns := map[string]string{}
	var pods []*kpod
	shards, workers := 0, 0
	for _, rj := range rt.Spec.Template.Spec.ReplicatedJobs {
		spec := &rj.Template.Spec.Template.Spec
		server := rj.Name == "ps"
		for j := range max(int(rj.Replicas), 1) {
			for k := range int(*rj.Template.Spec.Completions) {
				// JobSet's pod host name and subdomain: <jobset>-<job>-<j>-<k>.<jobset>.
				host := fmt.Sprintf("%s%d%d", rj.Name[:1], j, k)
				name := fmt.Sprintf("%s-%s-%d-%d", tj.Name, rj.Name, j, k)
				dns[name+"."+tj.Name] = host
				p := &kpod{name: name + "-x", host: host, spec: spec, server: server, volumes: map[string]string{},
					fields: map[string]string{"metadata.name": name + "-x",
						"metadata.labels['jobset.sigs.k8s.io/jobset-name']":                tj.Name,
						"metadata.labels['jobset.sigs.k8s.io/job-index']":                  fmt.Sprint(j),
						"metadata.annotations['batch.kubernetes.io/job-completion-index']": fmt.Sprint(k)}}
				for _, v := range spec.Volumes {
					if v.Ephemeral != nil {
						p.volumes[v.Name] = filepath.Join(t.TempDir(), v.Name) // a claim made with the pod
					}
				}
				pods = append(pods, p)
				if server {
					shards++
				} else {
					workers++
				}
			}
		}
	}
	if want := int(*rt.Spec.MLPolicy.NumNodes); workers != want {
		t.Errorf("the node Job makes %d workers, mlPolicy.numNodes says %d", workers, want)
	}
	c := newCluster(t, pods, []string{"pacer-shard"})
	c.dns = dns
	for _, p := range pods {
		p.fields["status.podIP"] = c.net.Addr(p.host)
	}
	run, m := c.run(pods, filepath.Join(pods[0].volumes["ckpt"], "out"), func(i int) string { return pods[i].volumes["ckpt"] })
	checkJob(t, run, m, workers, shards)
}
