// Package modelcmd is the one implementation of the model commands (seed
// article 02, DESIGN §5): the provider-first wizard, configure, switch,
// use, default, status, list, refresh, add-model and set api-key. The
// REPL's `/model …` and the CLI's `mx-claw model …` are thin front ends
// over a Handler: they supply a Prompter (menus, hidden input), the
// session whose model may change, and where to print.
//
// The handlers know no terminal. Everything they ask goes through
// Prompter, so tests script it; every change is collected first and saved
// once at the end (config.Update), so cancelling at any step saves nothing.
// Switching a model never touches keys or base URLs; keys go only to the
// secret chain and are shown only as "[configured]".
//
// modelcmd imports config and secret (for Redact); front ends (cli, the
// future tui) import it. It must not import app, agent or store.
package modelcmd
