// Package ignore decides which paths of a directory tree git would ignore,
// so the tools that walk a workspace (glob, grep) skip build output,
// dependencies and the like, and never descend into .git.
//
// It reads the same files git does inside the tree: .git/info/exclude, the
// root .gitignore and nested .gitignore files, whose patterns are scoped
// to the directory holding them. Patterns are parsed and matched by
// go-git's plumbing/format/gitignore, whose Match(pathParts, isDir) knows
// whether a path is a directory, so "build/" matches the directory itself
// and a walk can prune it instead of visiting everything below.
//
// Not read: the global excludes file (core.excludesFile) and .gitignore
// files above the root; the tree is taken to be the whole repository.
//
// Who may import it: any package that walks a directory tree. It imports no
// mx-claw package.
package ignore
