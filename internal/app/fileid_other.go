//go:build !unix

package app

import "io/fs"

// fileID is empty where the file system gives no device and inode: trust
// is then bound by the repository's token alone.
func fileID(fi fs.FileInfo) string { return "" }
