package main

import (
	"fmt"
	"io"

	"github.com/pacer-ps/pacer/compare"
	"github.com/spf13/cobra"
)

func init() {
	register(func(stdout, _ io.Writer) *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "print pacer's module version and VCS revision",
			Long: "Print pacer's module version and the VCS revision it was built from, as summary.json\n" +
				"records them: the revision comes from -ldflags (scripts/setup stamps it) or the build info;\n" +
				"\"unknown\" when neither recorded one.",
			Example: "  pacer version",
			RunE: func(*cobra.Command, []string) error {
				v, c := compare.Build()
				fmt.Fprintf(stdout, "pacer %s (commit %s)\n", v, c)
				return nil
			},
		}
	})
}
