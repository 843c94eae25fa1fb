package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A command's help lists its flags in groups. cobra has no flag groups of
// its own: each flag carries its group as an annotation, and the usage
// template prints one heading per group.
const groupKey = "pacer_group"

// flagGroups is the order of the headings; "" is the command's own flags.
var flagGroups = []struct{ key, title string }{
	{"", "Flags"},
	{"cluster", "Cluster flags"},
	{"network", "Network flags (virtual time)"},
	{"learning", "Learning flags"},
	{"output", "Output flags"},
	{"live", "Live flags"},
}

// groupOf gives each flag name its group: the same name means the same
// thing in every command (they share their binders).
var groupOf = map[string]string{}

func init() {
	for group, names := range map[string][]string{
		"cluster": {"workers", "shards", "speeds", "jitter", "straggler", "server-delay", "base", "device-rate", "seed", "fail"},
		"network": {"network", "link", "worker-link", "shard-link", "apply-rate", "params"},
		"learning": {"model", "dataset", "data-dir", "train-limit", "test-limit", "epochs", "batch", "lr", "momentum", "optimizer",
			"weight-decay", "full-async-lr", "sampling", "normalize", "clip-norm", "ema", "lr-schedule", "train-n", "eval-every", "target", "targets", "init"},
		"output": {"out", "json", "v", "log-level", "log-json"},
		"live": {"host", "token", "control-token", "checkpoint-dir", "checkpoint-interval", "restore", "durability", "metrics-addr", "max-pending", "exit-when-done",
			"index", "listen", "listen-fd", "peers", "heartbeat-timeout", "coordinator", "id", "connect-timeout",
			"tls", "tls-cert", "tls-key", "tls-ca", "tls-server-name"},
	} {
		for _, n := range names {
			groupOf[n] = group
		}
	}
	cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages)
}

// groupFlags annotates cmd's flags with their groups.
func groupFlags(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if g := groupOf[f.Name]; g != "" {
			if f.Annotations == nil {
				f.Annotations = map[string][]string{}
			}
			f.Annotations[groupKey] = []string{g}
		}
	})
}

// groupedFlagUsages is the help's flag section: a heading per group.
func groupedFlagUsages(cmd *cobra.Command) string {
	sets := map[string]*pflag.FlagSet{}
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := ""
		if a := f.Annotations[groupKey]; len(a) > 0 {
			g = a[0]
		}
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = false
		}
		sets[g].AddFlag(f)
	})
	var b strings.Builder
	for _, g := range flagGroups {
		if fs := sets[g.key]; fs != nil {
			fmt.Fprintf(&b, "\n\n%s:\n%s", g.title, strings.TrimRight(fs.FlagUsagesWrapped(100), " \n"))
		}
	}
	return b.String()
}

// usageTemplate is cobra's default with the flags printed in groups.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} COMMAND [flags]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}{{groupedFlagUsages .}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} COMMAND --help" for more information about a command.{{end}}
`
