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
