// Package ignore decides which paths of a directory tree git would ignore,
// so the tools that walk a workspace (glob, grep) skip build output,
// dependencies and the like, and never descend into .git.
//
// It reads the same files git does inside the tree: .git/info/exclude, the
// root .gitignore and nested .gitignore files, whose patterns are scoped
// to the directory holding them. Patterns follow gitignore(5): "!"
// negation, "dir/" for directories only, anchoring by a leading or inner
// slash, "**" for any number of directories, trailing-space rules; globs
// are matched as git's wildmatch does (wildmatch.go): "*", "?", bracket
// expressions with "!" or "^", ranges and "[:alpha:]"-style classes,
// backslash escapes, and a "**" inside a component that matches across
// slashes. A match knows whether the path is a directory, so "build/"
// matches the directory itself and a walk can prune it instead of
// visiting everything below. TestAgainstGit checks the matcher against
// git check-ignore on 36 sets of ignore files.
//
// The matcher is its own rather than go-git's: go-git's package pulled in
// its config parser and encoding/gob, whose package initialisation every
// start of mx-claw paid for (about half a millisecond), and it matched
// "a//b", "[!…]" and "b**" otherwise than git does. Both the path and
// each glob are matched with a table of reachable positions, so a hostile
// .gitignore cannot make a match take exponential time.
//
// Not read: the global excludes file (core.excludesFile) and .gitignore
// files above the root; the tree is taken to be the whole repository.
//
// A .gitignore that is not a regular file (a link to /dev/zero, a named
// pipe) or is over 1 MiB has no patterns: it is read through safefile.
//
// Who may import it: any package that walks a directory tree. It imports
// only safefile.
package ignore
