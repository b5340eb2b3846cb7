package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestFirstTurnWarmsCheckpoints: a session's turn starts the workspace's
// first checkpoint in the background, even a turn that only talks, so
// the first command does not pay for it.
func TestFirstTurnWarmsCheckpoints(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	f.srv.Enqueue(llmtest.Text("hello"))
	f.run(s.ID, "hi", nil)
	st, err := f.core.opts.Checkpoints.For(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.WaitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	blobs := 0
	filepath.WalkDir(filepath.Join(f.core.opts.Checkpoints.Dir(), checkpoint.Key(f.ws), "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs++
		}
		return nil
	})
	if blobs != 3 {
		t.Errorf("%d blobs saved after a turn that only talked, want the workspace's 3 files", blobs)
	}
}
