package scenario

// presets encode the papers' settings (PARADIGMS.md, "Straggler and delay
// models"). Sizes are scaled to what two cores train in minutes; the
// simulated cluster's time is independent of this machine.
var presets = map[string]Scenario{
	"pair": {
		Name: "pair",
		Description: "Two workers, one twice as slow as the other (the DSSP paper's GTX 1060 and 1080 Ti). " +
			"Which paradigm turns the fast worker's spare time into progress without letting staleness spoil it?",
		Paradigms: []string{"bsp", "asp", "ssp:s=3", "ssp:s=15", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=1", "softsync:n=2"},
		Workers:   2, Speeds: []float64{1, 2}, Jitter: 0.05,
		Epochs: 3, Target: 0.85,
	},
	"jitter": {
		Name:        "jitter",
		Description: "Eight identical workers whose iteration time varies by 20% (coefficient of variation).",
		Paradigms:   []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=1", "softsync:n=8"},
		Workers:     8, Jitter: 0.2,
		Epochs: 3, Target: 0.85,
	},
	"heavytail": {
		Name: "heavytail",
		Description: "Sixteen workers with the backup-workers paper's heavy tail: 1.3–1.8 s iterations, and about 1% " +
			"of iterations delayed by seconds to minutes. Does dropping the slowest gradients pay?",
		Paradigms: []string{"bsp", "asp", "backup:b=1", "backup:b=2", "backup:b=4"},
		Workers:   16, Straggler: "heavytail",
		Epochs: 3, Target: 0.85,
	},
	"slow-servers": {
		Name: "slow-servers",
		Description: "Thirty-two workers and four shards; 0.16% of pull responses are delayed by 4 s (the PSP paper). " +
			"Partial push (c) and partial pull (b) against full synchronization.",
		Paradigms: []string{"bsp", "psp:c=28,b=1", "psp:c=28,b=0.75", "psp:c=20,b=0.75"},
		Workers:   32, Shards: 4, ServerDelay: "spike:p=0.0016,delay=4s", Jitter: 0.05,
		Epochs: 3, Target: 0.85,
	},
	"mixed32": {
		Name: "mixed32",
		Description: "A larger mixed cluster: 32 workers in four generations (speeds 1, 1.3, 1.7, 2.5) with 10% jitter " +
			"and one persistently slow worker.",
		Paradigms: []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=2", "psp:c=28,b=1", "softsync:n=32"},
		Workers:   32, Speeds: []float64{1, 1.3, 1.7, 2.5}, Jitter: 0.1, Straggler: "slow:worker=5,factor=3",
		Epochs: 3, Target: 0.85,
	},
}
