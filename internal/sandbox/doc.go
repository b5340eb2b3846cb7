// Package sandbox puts an operating-system boundary under the commands
// mx-claw runs for the model (DESIGN §8, invariant 5: an approved command
// still runs inside it). It owns the `sandbox` settings key, the policy a
// session's commands run under, the backends that enforce it and the
// report of which one is in force.
//
// # Backends
//
//   - bwrap (Linux, first choice): bubblewrap builds the file-system view —
//     a read-only root, the writable roots bound read-write, protected paths
//     re-bound read-only and absent ones masked — in fresh pid (and, with
//     the network off, network) namespaces, dying with mx-claw.
//     An absent protected path is masked by a mount whose target bwrap
//     creates on the host for the run (an empty file or directory,
//     removed after it: [Manager] holds each while any run uses it). So
//     that git inside does not list these placeholders as untracked
//     files, the command's environment gets git configuration entries
//     (GIT_CONFIG_COUNT, after any it has) that include, for the
//     repository holding them only (`includeIf.gitdir:`), a per-run
//     configuration naming a per-run excludes file: the user's own
//     excludes (core.excludesFile as configured, else git's default)
//     followed by the placeholders' paths anchored at that repository's
//     root. Both files are outside the workspace, bound read-only and
//     removed after the run. Only the run's placeholders are listed, and
//     a nested repository's files are untouched (a global excludes file
//     would hide its real .mcp.json). Rewriting the repository's
//     info/exclude instead would touch the user's files or need one more
//     mount target inside .git; `ls -a` still shows the placeholders, and
//     run_command says what they are when its output names one.
//   - landlock (Linux, where bwrap cannot run, e.g. without user
//     namespaces): the mx-claw binary re-executes itself as a helper
//     ([HelperArg]) that applies Landlock (writes limited to the writable
//     roots, TCP limited to the proxy) and a seccomp filter, then execs
//     bash. Landlock only grants; it cannot re-protect a path below a
//     writable directory, so directories holding a protected path are left
//     read-only themselves and their other entries are granted one by one
//     (see [Plan]): the workspace root accepts no new top-level entries
//     under this backend.
//   - seatbelt (macOS): `sandbox-exec -p PROFILE`; the profile is generated
//     as text ([SeatbeltProfile]) and tested as text.
//   - none: no boundary. The user is told once, and commands that are not
//     read-only ask in every permission mode but bypass (the agent does
//     that with [Status.Enforced]).
//
// Under every backend the same helper sets the resource limits ([Limits]:
// CPU time, address space, processes, file size) and, on Linux, a seccomp
// filter that always denies ptrace, process_vm_* and io_uring_*, and
// sockets other than AF_UNIX when the network is off. A backend that
// cannot be set up fails the command with a [SetupError]; nothing ever
// falls back to running unconfined.
//
// With `allowedHosts` the command's network goes only through a small
// HTTP(S) CONNECT proxy of this process ([Proxy]) that the command finds in
// HTTP_PROXY and HTTPS_PROXY; the proxy lets through hosts that match the
// list exactly or as a dot-suffix ([HostAllowed]).
//
// # Who may import it
//
// execx (to launch a command through [Session.Prepare]), the tools (for
// the [Session] a command runs in), the agent (for [Status.Enforced]), the
// app wiring and the CLI (settings, `mx-claw sandbox status`, the helper's
// entry point). It imports no other mx-claw package.
package sandbox
