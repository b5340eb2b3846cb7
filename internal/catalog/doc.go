// Package catalog knows the models mx-claw talks to: how large their context
// window is, how many tokens they may write, and what their tokens cost. It
// also estimates token counts of text and messages before a provider has
// counted them, and corrects those estimates from the counts providers
// report.
//
// It owns three things:
//
//   - the built-in model table and its per-model overrides from config
//     ([Lookup], [Override]); an unknown model gets a conservative window
//     and no price, so its cost shows as unknown, never as a guess;
//   - cost accounting ([Cost]) under one stated convention for cached
//     tokens;
//   - token estimation ([Estimate], [EstimateMessage]) and its calibration
//     ([Calibrator]).
//
// Everything here is pure: no I/O, no package-level mutable state (the table
// is an unexported value that is never written). The agent imports catalog
// for context accounting, compaction thresholds and budgets, and the CLI for
// model listings and the costs shown by `sessions show`. Per-model entries
// in config.json have the JSON shape of [Override]; catalog itself reads no
// config. catalog imports only internal/protocol, so any package may import
// it without a cycle.
package catalog
