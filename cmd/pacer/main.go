// Command pacer is the parameter server, simulator and paradigm comparison
// tool. Each subcommand lives in its own file and registers its
// constructor; see `pacer --help`. The command line follows kubectl's
// conventions (spf13/cobra): GNU --flags, `pacer help CMD`, suggestions for
// a mistyped command, exit 0 on success, 1 on failure, 2 on a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/spf13/cobra"
)

// newCommand builds one subcommand writing to stdout and stderr, so tests
// read its output from buffers.
type newCommand func(stdout, stderr io.Writer) *cobra.Command

var commands []newCommand

func register(c newCommand) { commands = append(commands, c) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in what the user typed (a command, a flag, its
// value, an argument, or any input a command refuses before it starts
// running): it exits 2 and points at the command's help. An error once the
// run has started is a failure, exit 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usage marks err as a usage error (nil stays nil).
func usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(context.WithValue(context.Background(), argsKey{}, args))
	if err == nil {
		return exitOK
	}
	if cmd == nil {
		cmd = root
	}
	// cobra's own errors before a command runs (an unknown command, with
	// its suggestions) are usage errors too.
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), strings.TrimRight(err.Error(), "\n"))
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	return exitFailure
}

// newRoot builds the whole command tree.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "pacer",
		Short: "a parameter server with pluggable synchronization paradigms",
		Long: "pacer: a parameter server with pluggable synchronization paradigms.\n\n" +
			"It simulates a paradigm on a cluster you describe (sim), trains a model with one in\n" +
			"virtual time or on a live server (train), compares several on one scenario (compare),\n" +
			"runs the live server's processes on a real cluster (server, worker), and turns a\n" +
			"trained job into one model file PyTorch loads and measures it (export, eval).\n\n" +
			"Paradigm specs:\n  " + strings.ReplaceAll(paradigmForms(), ", ", "\n  "),
		Example: `  pacer compare --scenario pair --out out/pair
  pacer sim --paradigm ssp:s=3 --workers 8 --speeds 1,2 --iterations 500
  pacer train --paradigm bsp --workers 4 --epochs 2
  pacer help train`,
		SilenceErrors: true, // run prints them, short
		SilenceUsage:  true, // no usage dump on an error
		// A PACER_KERNEL the kernels cannot honour is refused before any
		// command runs, rather than computing on another path than asked.
		PersistentPreRunE: func(*cobra.Command, []string) error { return usage(kernel.EnvErr()) },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	root.SetUsageTemplate(usageTemplate)
	for _, c := range commands {
		sub := c(stdout, stderr)
		if sub.Args == nil {
			sub.Args = noArgs
		}
		groupFlags(sub)
		root.AddCommand(sub)
	}
	root.InitDefaultHelpCmd() // now, to describe it like the others
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Short = "print the help of a command"
			c.Long = "Print the help of a command: what it does, examples and its flags."
			c.Example = "  pacer help train"
			c.Args = helpTopic
		}
	}
	return root
}

// noArgs refuses positional arguments: every command takes flags only.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usage(fmt.Errorf("unexpected argument %q: %s takes flags only", args[0], cmd.CommandPath()))
	}
	return nil
}

type argsKey struct{}

// commandArgs is what followed cmd's name on the command line, as typed
// (a report records the command that reproduces it).
func commandArgs(cmd *cobra.Command) []string {
	args, _ := cmd.Context().Value(argsKey{}).([]string)
	for i, a := range args {
		if a == cmd.Name() {
			return args[i+1:]
		}
	}
	return nil
}

// helpTopic refuses help on a command that does not exist (cobra's help
// prints the usage and succeeds).
func helpTopic(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	found, rest, err := cmd.Root().Find(args)
	if err != nil || found == cmd.Root() || len(rest) > 0 {
		return usage(fmt.Errorf("no help topic %q; the commands are listed by pacer --help", strings.Join(args, " ")))
	}
	return nil
}
