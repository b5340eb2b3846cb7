//go:build !linux

package checkpoint

// watcher is Linux's inotify watcher; elsewhere snapshots always walk the
// whole workspace.
type watcher struct{}

const gitInfo = ".git/info"

func newWatcher() (*watcher, bool)                           { return nil, false }
func (*watcher) add(root, rel string) error                  { return nil }
func (*watcher) changes() (paths map[string]bool, full bool) { return nil, true }
func (*watcher) close()                                      {}
