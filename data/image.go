package data

import (
	"fmt"
	"strings"
)

// Image is the shape of a data set's samples: C channels of H×W pixels, stored channel-major in
// the features (channel 0's rows, then channel 1's, …), the order of a PyTorch NCHW batch.
// Dim is C·H·W.
type Image struct{ C, H, W int }

// ImageOf is the shape of the named data set's samples, known from the name alone, so that a
// process without the files (a server shard) builds the same model as the workers: 1×28×28 for
// fashion-mnist and mnist (the only shape their files may declare), 3×32×32 for cifar10, and
// 1×28×28 for synthetic (784 features, Fashion-MNIST's shape). The names are Load's.
func ImageOf(name string) (Image, error) {
	switch strings.ToLower(name) {
	case "fashion-mnist", "fashion_mnist", "fashionmnist":
		return Image{C: 1, H: fashionMNIST.rows, W: fashionMNIST.cols}, nil
	case "mnist":
		return Image{C: 1, H: mnist.rows, W: mnist.cols}, nil
	case "cifar10", "cifar-10":
		return Image{C: cifarChannels, H: cifarSide, W: cifarSide}, nil
	case "synthetic":
		return Image{C: 1, H: 28, W: 28}, nil
	}
	return Image{}, fmt.Errorf("data: unknown data set %q; valid names: %s", name, strings.Join(Names, ", "))
}
