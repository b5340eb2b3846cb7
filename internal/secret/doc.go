// Package secret keeps mx-claw's API keys out of its config: it reads them
// from a chain of sources and writes them to the safest store the machine
// has (DESIGN §5, seed article 02 §9).
//
// Read order, first value wins:
//
//  1. an external command, MX_CLAW_SECRET_COMMAND (read-only);
//  2. the provider's environment variables (read-only);
//  3. the OS store: the Secret Service on Linux (D-Bus, through
//     zalando/go-keyring), the Keychain on macOS (`security`, with the value
//     hex-encoded on stdin, never in argv);
//  4. an AES-256-GCM file, secrets.json with its key in secrets.key.
//
// Writes go to the OS store when it answers, else to the file; a value that
// came from a read-only source is never written anywhere. Windows uses the
// file. MX_CLAW_SECRET_BACKEND=file skips the OS store (tests, servers
// without a desktop session); =os refuses the file.
//
// Secrets never appear in an error message, a log line, a process argument
// or a child's environment: errors name the provider and the store, never
// the value, and Redact hides a value that another party echoes back.
//
// The package imports no other mx-claw package but safefile (the files are
// read only if regular, never more than 1 MiB), so any package may import
// it; in practice app builds one Chain per process and hands it to the
// front ends (modelcmd, cli).
package secret
