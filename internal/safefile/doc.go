// Package safefile opens and reads the files mx-claw reads on its own —
// settings, config.json, AGENTS.md, the secrets file, a repository's
// .git/config and .gitignore files — so that a hostile file cannot hang or
// exhaust the process. Such files come from the user's home, but also from
// a workspace that may be a stranger's repository, where a settings file
// can be a symbolic link to /dev/zero or a named pipe.
//
// Every read here:
//
//   - opens the file without blocking (O_NONBLOCK): opening a named pipe
//     with no writer returns at once instead of waiting forever;
//   - checks the opened file (fstat, not a stat of the path before it, so
//     nothing can be swapped in between) and refuses anything but a
//     regular file with an error matching [ErrNotRegular] that names what
//     it is (a directory, a named pipe, a device, …);
//   - reads at most a cap (by default [DefaultMax], 1 MiB), and refuses a
//     larger file with an error matching [ErrTooLarge] instead of reading
//     it, so /dev/zero or a 2 GiB file costs nothing.
//
// [ReadInTree] also refuses symbolic links on the way from a directory to
// the file: a project's own configuration (.mx-claw/settings.json) must be
// in the project, not a link that points anywhere.
//
// Who may import it: any package that reads a file it was not asked to
// read by the model (the tools have their own checks). It imports no
// mx-claw package.
package safefile
