package catalog

import (
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// within reports whether est is within ±25 % of real.
func within(est, real int64) bool {
	return est*4 >= real*3 && est*4 <= real*5
}

// samples are fixed texts with their real token counts, computed with the
// npm package gpt-tokenizer 4.0.0 (an exact port of OpenAI's tiktoken
// encodings): cl100k_base (gpt-4, gpt-3.5) and o200k_base (gpt-4o, gpt-4.1,
// o-series, gpt-5).
var samples = []struct {
	name         string
	ascii        bool
	text         string
	cl100k, o200 int
}{
	{"english", true, `The agent keeps the whole transcript in the store and sends the model a projection of it. When a session grows past most of the context window, the older turns are summarised, while the user's instructions, the files that were changed and the commands that failed stay in a pinned ledger that is never summarised away.
`, 64, 63},
	{"go", true, `// Lookup returns the model for id, applying any overrides.
func Lookup(id string, overrides map[string]Override) Model {
	m, ok := find(id)
	if !ok {
		m = Model{ID: id, ContextWindow: DefaultContextWindow}
	}
	for _, key := range candidates(id) {
		if o, ok := overrides[key]; ok {
			m = o.apply(m)
		}
	}
	return m
}
`, 90, 90},
	{"json", true, `{"path":"internal/catalog/catalog.go","old_string":"return m, false","new_string":"return Model{ID: id, ContextWindow: 32768}, false","replace_all":false}
`, 40, 40},
	// o200k packs Chinese tighter (73); Estimate's one token per
	// character follows cl100k and errs high for o200k.
	{"chinese", false, `代理把完整的对话记录保存在数据库里，只把其中的一部分发给模型。当会话接近上下文窗口的上限时，较早的轮次会被总结，而用户的指令、修改过的文件和失败的命令会保留在一个固定的账本中，永远不会被总结掉。
`, 102, 73},
	{"russian", false, `Агент хранит полную историю сессии в базе данных и отправляет модели только её проекцию.
`, 34, 24},
	{"mixed", false, `Deploy finished 🎉🚀 — all checks passed ✅. Café déjà vu naïve résumé.`, 24, 19},
}

func TestEstimateSamples(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			est := Estimate(s.text)
			t.Logf("estimate %d, cl100k %d, o200k %d", est, s.cl100k, s.o200)
			if !within(int64(est), int64(s.cl100k)) {
				t.Errorf("Estimate = %d, not within 25%% of the cl100k count %d", est, s.cl100k)
			}
			// Beyond English, o200k is much denser than cl100k and
			// Estimate errs high, the safe side: check cl100k only.
			if s.ascii && !within(int64(est), int64(s.o200)) {
				t.Errorf("Estimate = %d, not within 25%% of the o200k count %d", est, s.o200)
			}
		})
	}
}

// TestEstimateRecordedStreams compares estimates with the token counts the
// providers reported in the recorded streams, where the text they counted
// is in the recording: completions whose every token is visible, and the
// prompt of the OpenAI text stream (one user message, "What's the weather
// like in SF?", from the openai-python test the recording belongs to).
func TestEstimateRecordedStreams(t *testing.T) {
	t.Parallel()
	t.Run("openai-chat-text content", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "openai-chat-text.sse")
		check(t, int64(Estimate(rec.content[0])), rec.completionTokens)
	})
	t.Run("openai-chat-text prompt", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "openai-chat-text.sse")
		m := protocol.Message{Role: protocol.RoleUser, Content: "What's the weather like in SF?"}
		check(t, int64(EstimateMessage(&m)), rec.promptTokens)
	})
	t.Run("openai-chat-multiple-choices contents", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "openai-chat-multiple-choices.sse")
		var est int
		for i := range 3 {
			est += Estimate(rec.content[i])
		}
		check(t, int64(est), rec.completionTokens)
	})
	t.Run("deepseek-reasoner reasoning", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "deepseek-reasoner-reasoning-content.sse")
		check(t, int64(Estimate(rec.reasoning)), rec.reasoningTokens)
	})
	t.Run("deepseek-reasoner answer", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "deepseek-reasoner-reasoning-content.sse")
		check(t, int64(Estimate(rec.content[0])), rec.completionTokens-rec.reasoningTokens)
	})
	t.Run("deepseek-reasoner tool-call reasoning", func(t *testing.T) {
		t.Parallel()
		rec := readRecording(t, "deepseek-reasoner-tool-call.sse")
		check(t, int64(Estimate(rec.reasoning)), rec.reasoningTokens)
	})
	// Tool calls: the completion is the calls in the provider's own
	// wrapping, which EstimateMessage approximates (less the message
	// overhead, which belongs to the next prompt).
	for _, file := range []string{
		"openai-chat-tool-call-split-args.sse",
		"openai-chat-parallel-tool-calls.sse",
		"deepseek-chat-parallel-tool-calls.sse",
	} {
		t.Run(file+" tool calls", func(t *testing.T) {
			t.Parallel()
			rec := readRecording(t, file)
			m := protocol.Message{Role: protocol.RoleAssistant, ToolCalls: rec.toolCalls}
			check(t, int64(EstimateMessage(&m)-MessageOverhead), rec.completionTokens)
		})
	}
}

func check(t *testing.T, est, reported int64) {
	t.Helper()
	t.Logf("estimate %d, reported %d", est, reported)
	if reported <= 0 {
		t.Fatalf("no reported count")
	}
	if !within(est, reported) {
		t.Errorf("estimate %d not within 25%% of the reported %d", est, reported)
	}
}

func TestEstimateEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"hello world", 2},
		{"12345678", 3}, // digits in threes
		{"getCurrentWeather", 3},
		{"\n", 1},
		{"x := 1\n", 4},
		{"代码", 2},
		{"😀", 2},
		{"\xff\xfe", 2}, // invalid UTF-8: a token per byte
	}
	for _, tt := range tests {
		if got := Estimate(tt.text); got != tt.want {
			t.Errorf("Estimate(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	// Longer text never counts less.
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	if a, b := Estimate(long[:1000]), Estimate(long); a > b {
		t.Errorf("prefix %d > whole %d", a, b)
	}
}

func TestEstimateMessage(t *testing.T) {
	t.Parallel()
	if got := EstimateMessage(nil); got != 0 {
		t.Errorf("EstimateMessage(nil) = %d", got)
	}
	empty := protocol.Message{Role: protocol.RoleAssistant}
	if got := EstimateMessage(&empty); got != MessageOverhead {
		t.Errorf("empty message = %d, want %d", got, MessageOverhead)
	}
	args := `{"path":"internal/catalog/catalog.go","old_string":"a","new_string":"b"}`
	call := protocol.Message{
		Role: protocol.RoleAssistant, Content: "Fixing it.",
		Reasoning: strings.Repeat("thinking ", 1000), // never sent back
		ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "edit", Arguments: args}},
	}
	want := MessageOverhead + Estimate("Fixing it.") + toolCallOverhead + Estimate("edit") + Estimate(args)
	if got := EstimateMessage(&call); got != want {
		t.Errorf("tool-call message = %d, want %d", got, want)
	}
	result := protocol.Message{Role: protocol.RoleTool, ToolCallID: "call_1", Content: "ok"}
	if got, want := EstimateMessage(&result), MessageOverhead+Estimate("ok")+Estimate("call_1"); got != want {
		t.Errorf("tool result = %d, want %d", got, want)
	}
}

// TestEstimateAllocs checks that estimating allocates nothing. It is not
// parallel: AllocsPerRun measures the whole process.
func TestEstimateAllocs(t *testing.T) {
	text := benchText()
	m := protocol.Message{Role: protocol.RoleAssistant, Content: text[:4096],
		ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "edit", Arguments: `{"a":1}`}}}
	if n := testing.AllocsPerRun(100, func() { Estimate(text) }); n != 0 {
		t.Errorf("Estimate allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { EstimateMessage(&m) }); n != 0 {
		t.Errorf("EstimateMessage allocates %v times", n)
	}
}

// benchText is a mix of the samples: prose, code, JSON and Chinese.
func benchText() string {
	var b strings.Builder
	for b.Len() < 64<<10 {
		for _, s := range samples {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

// BenchmarkEstimate reports ns per byte of mixed text; it must not allocate.
func BenchmarkEstimate(b *testing.B) {
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		n += Estimate(text)
	}
	b.StopTimer()
	if b.N > 0 && b.Elapsed() > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(text)), "ns/byte")
	}
	_ = n
}
