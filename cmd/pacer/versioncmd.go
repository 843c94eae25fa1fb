package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/spf13/cobra"
)

func init() {
	register(func(stdout, _ io.Writer) *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "print pacer's module version and VCS revision",
			Long: "Print pacer's module version and the VCS revision it was built from, as summary.json\n" +
				"records them: the revision comes from -ldflags (scripts/setup stamps it) or the build info;\n" +
				"\"unknown\" when neither recorded one. A second line names the kernel path this process\n" +
				"computes with (PACER_KERNEL=go|avx2|avx512 forces one; docs/benchmarks.md).",
			Example: "  pacer version",
			RunE: func(*cobra.Command, []string) error {
				v, c := compare.Build()
				fmt.Fprintf(stdout, "pacer %s (commit %s)\n", v, c)
				fmt.Fprintf(stdout, "kernels %s (default on this CPU %s; available %s)\n", kernel.Active(), kernel.DefaultPath(), kernelPaths())
				return nil
			},
		}
	})
}

func kernelPaths() string {
	var names []string
	for _, p := range kernel.Available() {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
