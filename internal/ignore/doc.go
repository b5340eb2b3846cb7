// Package ignore decides which paths of a directory tree git would ignore,
// so the tools that walk a workspace (glob, grep) skip build output,
// dependencies and the like, and never descend into .git.
//
// It reads the same files git does inside the tree: .git/info/exclude, the
// root .gitignore and nested .gitignore files, whose patterns are scoped
// to the directory holding them. Patterns follow gitignore(5): "!"
// negation, "dir/" for directories only, anchoring by a leading or inner
// slash, "*", "?", bracket expressions ("[!a-z]" too), "**" for any number
// of directories, backslash escapes and trailing-space rules. A match
// knows whether the path is a directory, so "build/" matches the
// directory itself and a walk can prune it instead of visiting everything
// below. TestAgainstGit checks the matcher against git check-ignore.
//
// The matcher is its own (pattern.go) rather than go-git's: go-git's
// package pulled in its config parser and encoding/gob, whose package
// initialisation every start of mx-claw paid for (about half a
// millisecond), and it read "a//b" and "[!…]" otherwise than git does.
// "**" is matched segment by segment with a table of reachable prefixes,
// so a hostile .gitignore cannot make a match take exponential time.
//
// Not read: the global excludes file (core.excludesFile) and .gitignore
// files above the root; the tree is taken to be the whole repository.
//
// Who may import it: any package that walks a directory tree. It imports no
// mx-claw package.
package ignore
