package job

import (
	"context"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/nn"
)

// CountTrain counts the data set's training samples (shard 0 ends the job
// after epochs·N/batch pushes) from the files' headers alone, and checks
// the data's shape against the model as every worker will: what a server started without
// the count (--train-n, the description's train_n) does first.
func CountTrain(j Config) (int, error) {
	in, err := (&data.Loader{Dir: j.DataDir}).Info(context.Background(), j.Dataset)
	if err != nil {
		return 0, err
	}
	if _, flat, err := nn.ParseFlat(j.Model); err != nil {
		return 0, err
	} else if !flat { // a flat model's input shape is its workers' business
		m, err := NewModel(j)
		if err != nil {
			return 0, err
		}
		if err := nn.CheckData(m, in.Name+"/train", in.Dim, in.Classes); err != nil {
			return 0, err
		}
	}
	n := in.TrainN
	if j.TrainLimit > 0 && j.TrainLimit < n {
		n = j.TrainLimit
	}
	return n, nil
}
