package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kubeflow "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// object is one document of a manifest, decoded into its API type.
type object struct {
	file, kind, name string
	v                any
}

// kinds are the API types a manifest may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"v1/Service":                         func() any { return new(corev1.Service) },
	"v1/PersistentVolumeClaim":           func() any { return new(corev1.PersistentVolumeClaim) },
	"apps/v1/StatefulSet":                func() any { return new(appsv1.StatefulSet) },
	"batch/v1/Job":                       func() any { return new(batchv1.Job) },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return new(networkingv1.NetworkPolicy) },
	"kubeflow.org/v1/TFJob":              func() any { return new(kubeflow.TFJob) },
	"trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime": func() any { return new(trainer.ClusterTrainingRuntime) },
	"trainer.kubeflow.org/v1alpha1/TrainJob":               func() any { return new(trainer.TrainJob) },
}

// decodeStrict decodes one YAML document into its API type, refusing a
// field the type does not have (as kubectl apply --validate=strict does)
// and a field given twice.
func decodeStrict(file string, doc []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, err
	}
	mk, ok := kinds[head.APIVersion+"/"+head.Kind]
	if !ok {
		return object{}, fmt.Errorf("apiVersion %q kind %q: not a type this test knows", head.APIVersion, head.Kind)
	}
	v := mk()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return object{}, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	return object{file: file, kind: head.Kind, name: head.Metadata.Name, v: v}, nil
}

// manifests decodes every document of every manifest in deploy/.
func manifests(t *testing.T) []object {
	t.Helper()
	files, _ := filepath.Glob("*/*.yaml")
	if len(files) < 3 {
		t.Fatalf("manifests %v: want kubernetes/pacer.yaml, kubeflow/tfjob.yaml and kubeflow/trainer.yaml", files)
	}
	var out []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			o, err := decodeStrict(f, doc)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			out = append(out, o)
		}
	}
	return out
}

// pod is one pod template of a manifest and what owns it.
type pod struct {
	owner string
	spec  *corev1.PodSpec
}

// pods finds every pod template in o.
func pods(o object) []pod {
	name := o.kind + " " + o.name
	switch v := o.v.(type) {
	case *appsv1.StatefulSet:
		return []pod{{name, &v.Spec.Template.Spec}}
	case *batchv1.Job:
		return []pod{{name, &v.Spec.Template.Spec}}
	case *kubeflow.TFJob:
		var ps []pod
		for _, typ := range slices.Sorted(func(yield func(kubeflow.ReplicaType) bool) {
			for k := range v.Spec.TFReplicaSpecs {
				if !yield(k) {
					return
				}
			}
		}) {
			ps = append(ps, pod{name + " " + string(typ), &v.Spec.TFReplicaSpecs[typ].Template.Spec})
		}
		return ps
	case *trainer.ClusterTrainingRuntime:
		var ps []pod
		for i := range v.Spec.Template.Spec.ReplicatedJobs {
			rj := &v.Spec.Template.Spec.ReplicatedJobs[i]
			ps = append(ps, pod{name + " " + rj.Name, &rj.Template.Spec.Template.Spec})
		}
		return ps
	}
	return nil
}

func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../compare/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestManifestsDecodeStrictly (issue 35): every document of every manifest
// is an object of the real API (k8s.io/api, Kubeflow's TFJob, Trainer v2
// and the JobSet it embeds), with no field those types lack.
func TestManifestsDecodeStrictly(t *testing.T) {
	objs := manifests(t)
	seen := map[string]bool{}
	for _, o := range objs {
		seen[o.kind] = true
	}
	for _, k := range []string{"StatefulSet", "Job", "Service", "NetworkPolicy", "TFJob", "PersistentVolumeClaim", "ClusterTrainingRuntime", "TrainJob"} {
		if !seen[k] {
			t.Errorf("no %s in deploy/'s manifests", k)
		}
	}
	// The check refuses what it should: a field the API lacks, a typo.
	if _, err := decodeStrict("x", []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completion: 4}\n")); err == nil {
		t.Error("a Job with spec.completion (a typo of completions) decoded")
	}
}

// TestManifestsStart (issue 35): what made the shipped objects decode but
// not start. Every container runs the image scripts/image builds, under
// its pinned tag, pulled only when absent; every claim a pod mounts is
// defined beside it or made for it; no two shards share a volume they
// cannot share; every server and worker has both probes.
func TestManifestsStart(t *testing.T) {
	tag := "pacer:" + version(t)
	objs := manifests(t)
	claims := map[string]map[string]corev1.PersistentVolumeAccessMode{} // file → claim → access
	for _, o := range objs {
		if c, ok := o.v.(*corev1.PersistentVolumeClaim); ok {
			if claims[o.file] == nil {
				claims[o.file] = map[string]corev1.PersistentVolumeAccessMode{}
			}
			claims[o.file][o.name] = c.Spec.AccessModes[0]
		}
	}
	servers := 0
	for _, o := range objs {
		for _, p := range pods(o) {
			for _, c := range append(slices.Clone(p.spec.InitContainers), p.spec.Containers...) {
				if c.Image != tag || c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Errorf("%s: %s container %s: image %q pull %q; want %q, IfNotPresent", o.file, p.owner, c.Name, c.Image, c.ImagePullPolicy, tag)
				}
				line := strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
				if !strings.HasPrefix(line, "pacer server") && !strings.HasPrefix(line, "pacer worker") {
					continue
				}
				if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
					c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
					t.Errorf("%s: %s: want a liveness probe on /healthz and a readiness probe on /readyz", o.file, p.owner)
				} else if port := c.LivenessProbe.HTTPGet.Port.String(); !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == port }) {
					t.Errorf("%s: %s: the probes' port %q is not a port of the container", o.file, p.owner, port)
				}
				if strings.Contains(line, "--data-dir=/data") || strings.Contains(line, ":latest") {
					t.Errorf("%s: %s: %q", o.file, p.owner, line)
				}
				if !strings.HasPrefix(line, "pacer server") {
					continue
				}
				servers++
				ckpt := ""
				for _, m := range c.VolumeMounts {
					if m.MountPath == "/ckpt" {
						ckpt = m.Name
						if sts, ok := o.v.(*appsv1.StatefulSet); ok {
							if !slices.ContainsFunc(sts.Spec.VolumeClaimTemplates, func(c corev1.PersistentVolumeClaim) bool { return c.Name == m.Name }) {
								t.Errorf("%s: %s: /ckpt is not one of its volumeClaimTemplates", o.file, p.owner)
							}
							continue
						}
						v := volume(p.spec, m.Name)
						switch {
						case v == nil:
							t.Errorf("%s: %s: no volume %s", o.file, p.owner, m.Name)
						case v.Ephemeral != nil:
						case v.PersistentVolumeClaim != nil:
							// One template for every shard: a shared claim, a directory each.
							if claims[o.file][v.PersistentVolumeClaim.ClaimName] != corev1.ReadWriteMany || m.SubPathExpr != "$(POD_NAME)" {
								t.Errorf("%s: %s: the shards share claim %s: want it defined here, ReadWriteMany, mounted with subPathExpr $(POD_NAME)",
									o.file, p.owner, v.PersistentVolumeClaim.ClaimName)
							}
						default:
							t.Errorf("%s: %s: /ckpt on a volume that does not keep checkpoints", o.file, p.owner)
						}
					}
				}
				if ckpt == "" || !strings.Contains(line, "--checkpoint-dir=/ckpt") || !strings.Contains(line, "--out=/ckpt/out") {
					t.Errorf("%s: %s: want --checkpoint-dir=/ckpt on its volume and --out=/ckpt/out", o.file, p.owner)
				}
			}
			for _, v := range p.spec.Volumes {
				if v.PersistentVolumeClaim != nil && claims[o.file][v.PersistentVolumeClaim.ClaimName] == "" {
					t.Errorf("%s: %s: claim %s is not defined in the file", o.file, p.owner, v.PersistentVolumeClaim.ClaimName)
				}
			}
		}
	}
	if servers != 3 {
		t.Errorf("%d server pod templates, want 3 (StatefulSet, TFJob PS, Trainer ps)", servers)
	}
}

func volume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}
