package nn

import "fmt"

// CheckData refuses a data set whose samples do not fit m: a number of features per sample
// other than the model's inputs (a 28×40 or 32×32×3 image flattened into an MLP built for
// 28×28 would train silently on misaligned pixels), or more label classes than the model's
// outputs. Every training mode (virtual time, the live workers, the server that counts the
// samples) calls it before the first step, so the error names both shapes instead of a panic
// deep in a layer.
func CheckData(m Model, data string, dim, classes int) error {
	if dim != m.InputSize() || classes > m.NumClasses() {
		return fmt.Errorf("model %s takes %d inputs per sample and %d classes, but data set %s has %d features per sample and %d classes",
			m.Name(), m.InputSize(), m.NumClasses(), data, dim, classes)
	}
	return nil
}
