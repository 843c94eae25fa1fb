package launch

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/pacer-ps/pacer/nn"
)

// The models a PyTorch worker may train are python/pacer/models.py's
// MODELS, each one of pacer's (nn.Names); a job of another is refused
// before any process starts.
func TestPythonModelsAreModelsPys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "python", "pacer", "models.py"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^MODELS = \{(.*)\}$`).FindSubmatch(b)
	if line == nil {
		t.Fatal("no MODELS = {...} line in models.py")
	}
	var py []string
	for _, m := range regexp.MustCompile(`"([a-z0-9-]+)":`).FindAllSubmatch(line[1], -1) {
		py = append(py, string(m[1]))
	}
	if !slices.Equal(py, pythonModels) {
		t.Errorf("models.py has %v, launch allows %v", py, pythonModels)
	}
	for _, m := range pythonModels {
		if !slices.Contains(nn.Names(), m) {
			t.Errorf("%s is no model of pacer's (%v)", m, nn.Names())
		}
	}
	cfg := quickJob(t, "bsp", 2, 1)
	cfg.Model, cfg.Dataset = "resnet", "fashion-mnist"
	if err := checkPythonWorkers(cfg, &Options{Mode: "tcp", PythonWorkers: 1}); err == nil {
		t.Error("a PyTorch worker for model resnet was accepted")
	}
}
