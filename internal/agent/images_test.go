package agent

import (
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
)

// TestViewForModel: a session that switched to a model without images
// sends notes instead of the pictures it holds; one that reads images
// sends them.
func TestViewForModel(t *testing.T) {
	t.Parallel()
	view := []llm.Message{
		{Role: "user", Content: "look", Images: []llm.Image{{MIME: "image/png", Data: "eA=="}}},
		{Role: "assistant", Content: "ok"},
	}
	turnFor := func(images bool) *turn {
		return &turn{core: &Core{opts: Options{Catalog: func(string) catalog.Model { return catalog.Model{Images: images} }}},
			model: Model{ID: "p/m"}}
	}
	if got := turnFor(true).viewForModel(view); len(got[0].Images) != 1 {
		t.Errorf("a model that reads images lost them: %+v", got[0])
	}
	got := turnFor(false).viewForModel(view)
	if len(got[0].Images) != 0 || !strings.Contains(got[0].Content, "1 image(s) left out") {
		t.Errorf("text-only view: %+v", got[0])
	}
	if len(view[0].Images) != 1 || view[0].Content != "look" {
		t.Error("the view itself was changed")
	}
	if &got[1] == &view[1] {
		t.Error("the view was not copied")
	}
}
