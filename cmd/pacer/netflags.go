package main

import (
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/spf13/pflag"
)

// netFlags are the simulated network's flags: the links (pacer sim,
// train and compare in virtual time) and, for pacer sim, which trains no
// model, the model's size.
type netFlags struct {
	fs        *pflag.FlagSet
	mode      string
	link      string
	workers   []string
	shards    []string
	applyRate float64
	params    int
	model     string
	// live is the live mode the job runs in ("" for virtual time and
	// sim): the live server moves real bytes over this machine's network,
	// so the simulated default does not apply; tcp mode emulates the links
	// the flags give (each process on a host of its own, package nsnet),
	// inproc refuses them.
	live runstats.Mode
}

// defaultNetwork is --network's default, which the help text is built
// from (it once said "none" was the default after the default became on).
const defaultNetwork = "on"

// networkHelp says which --network mode is the default, for a command's
// long help.
func networkHelp() string {
	if defaultNetwork == "none" {
		return "The default is --network none: transfers are instant."
	}
	return "The default is --network " + defaultNetwork + ", every link " + network.DefaultLink.String() +
		";\n--network none makes transfers instant."
}

func (n *netFlags) bindLinks(fs *pflag.FlagSet) {
	n.fs = fs
	fs.StringVar(&n.mode, "network", defaultNetwork, "on (the links below; default "+network.DefaultLink.String()+") | none (instant transfers)")
	fs.StringVar(&n.link, "link", "", "every link not overridden, as rate=RATE,latency=DURATION (e.g. rate=10Gbit,latency=50us), and ,degrade=F,from=T0,to=T1 for its rate divided by F from T0 to T1 of the cluster's time (sim and virtual time); turns the network on")
	fs.StringArrayVar(&n.workers, "worker-link", nil, "one worker's link, INDEX:rate=RATE,latency=DURATION[,degrade=F,from=T0,to=T1] (repeatable; fields left out keep --link's)")
	fs.StringArrayVar(&n.shards, "shard-link", nil, "one shard's link, INDEX:rate=RATE,latency=DURATION[,degrade=F,from=T0,to=T1] (repeatable)")
	fs.Float64Var(&n.applyRate, "apply-rate", network.DefaultApplyRate, "floats per second a shard applies, with a network (0: instant)")
}

func (n *netFlags) bindSize(fs *pflag.FlagSet) {
	fs.IntVar(&n.params, "params", 0, "the model's size in values, for the network's transfers (default: --model's)")
	fs.StringVar(&n.model, "model", job.DefaultModel, "model whose size (on Fashion-MNIST's 1×28×28 images) the network's transfers move: "+strings.Join(nn.Names(), " | "))
}

// links is the network the flags describe for a job of workers and
// shards (nil: none, and always in the live modes).
func (n *netFlags) links(workers, shards int) (*network.Spec, error) {
	given := setFlags(n.fs)
	shaping := given["link"] || given["worker-link"] || given["shard-link"] || given["apply-rate"]
	if n.live != "" {
		if !shaping && (!given["network"] || n.mode == "none") {
			return nil, nil // this machine's own network
		}
		if n.live != runstats.TCP {
			for _, f := range networkFlagNames {
				if given[f] {
					return nil, fmt.Errorf("--%s: the live server emulates links in tcp mode only (each shard and worker a process on a host of its own, a Linux network namespace; needs root); inproc moves bytes in memory", f)
				}
			}
		}
	}
	switch n.mode {
	case "none":
		if given["network"] && shaping {
			return nil, fmt.Errorf("--network none with --link, --worker-link, --shard-link or --apply-rate: give one or the other")
		}
		if !shaping {
			return nil, nil
		}
	case "on":
	default:
		return nil, fmt.Errorf("--network=%q: want none or on", n.mode)
	}
	s, err := network.ParseSpec(n.link, n.workers, n.shards, n.applyRate)
	if err != nil {
		return nil, err
	}
	if n.live != "" && s.Changes() {
		flag := "--link"
		for _, o := range []struct {
			flag string
			m    map[int]network.Link
		}{{"--worker-link", s.Workers}, {"--shard-link", s.Shards}} {
			for _, l := range o.m {
				if l.Changes() && !s.Default.Changes() {
					flag = o.flag
				}
			}
		}
		return nil, fmt.Errorf("%s degrade=: %w", flag, launch.ErrWindowNotEmulated)
	}
	for _, o := range []struct {
		flag, what string
		m          map[int]network.Link
		n          int
	}{{"--worker-link", "worker", s.Workers, workers}, {"--shard-link", "shard", s.Shards, shards}} {
		for i := range o.m {
			if i >= o.n {
				return nil, fmt.Errorf("%s %d: the job has %ss 0–%d", o.flag, i, o.what, o.n-1)
			}
		}
	}
	return &s, nil
}

// simSpec is pacer sim's network and the model's size its transfers move.
// autoBase is --base auto, which times --model's step.
func (n *netFlags) simSpec(workers, shards int, autoBase bool) (*network.Spec, int, error) {
	s, err := n.links(workers, shards)
	if err != nil {
		return nil, 0, err
	}
	given := setFlags(n.fs)
	if s == nil {
		// base: auto times --model's step, with or without a network.
		if given["params"] || given["model"] && !autoBase {
			return nil, 0, fmt.Errorf("--params and --model size the network's transfers, which --network none leaves out")
		}
		return nil, 0, nil
	}
	if given["params"] && given["model"] {
		return nil, 0, fmt.Errorf("--params and --model both give the model's size: give one")
	}
	if given["params"] {
		if n.params < 1 || n.params > compare.MaxParams {
			return nil, 0, fmt.Errorf("--params=%d: need 1 to %d values", n.params, compare.MaxParams)
		}
		return s, n.params, nil
	}
	m, err := job.NewModel(job.Config{Model: n.model})
	if err != nil {
		return nil, 0, fmt.Errorf("--model: %w", err)
	}
	return s, m.NumParams(), nil
}
