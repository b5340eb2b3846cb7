//go:build !linux

package checkpoint

// openDirStat returns a statter of dir's entries by full path.
func openDirStat(dir string) dirStatter { return pathStatter{dir} }
