// Package deploy_test checks deploy/'s manifests against the Kubernetes,
// Kubeflow and JobSet API types (strictly: a field the API does not have
// is an error), checks the image scripts/image builds, and runs the
// manifests' own commands and environment as processes on hosts of
// network namespaces, the closest this machine gets to a cluster.
//
// It is a module of its own so that those APIs, and the Go release they
// need, are this test's and never pacer's: go test here, in deploy/
// (scripts/test does).
package deploy_test
