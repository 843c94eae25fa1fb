package nn

import (
	"strconv"
	"strings"
	"testing"
)

func TestCheckDataNamesBothShapes(t *testing.T) {
	for _, name := range Names() {
		m, _ := New(name, Image28)
		if err := CheckData(m, "fashion-mnist/train", 784, 10); err != nil {
			t.Errorf("%s on 28×28 images: %v", name, err)
		}
		for _, c := range []struct{ dim, classes int }{{100, 10}, {28 * 40, 10}, {3072, 10}, {784, 11}} {
			err := CheckData(m, "some/train", c.dim, c.classes)
			if err == nil {
				t.Errorf("%s accepted %d features and %d classes", name, c.dim, c.classes)
				continue
			}
			for _, want := range []string{"model " + name, "784 inputs", "some/train", "has " + strconv.Itoa(c.dim) + " features"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v lacks %q", err, want)
				}
			}
		}
	}
}
