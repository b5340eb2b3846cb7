// Command benchfloor is the least any agent can do on the shared peer
// benchmark (../shared/bench): it posts at once, reads each streamed
// answer to its end, and sends the calls straight back with a one-word
// result, without running a tool or storing anything. Run in the
// harness's place of an agent (scripts/bench-floor.sh), its "first
// request" and "step gap" are what the harness, the machine and the fake
// server cost by themselves: the floor under every agent's figures.
//
// Like an agent it opens a new connection for every request (the fake
// server closes each one), dialled while it handles the previous answer.
// The task's files are not changed, so the harness reports the task as
// failed; only the timings mean something.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
)

// tools are the names and parameters the fake server maps its actions
// onto.
const tools = `[` +
	`{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},` +
	`{"type":"function","function":{"name":"write_file","description":"Write a file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}},` +
	`{"type":"function","function":{"name":"edit_file","description":"Replace text in a file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["path","old_string","new_string"]}}},` +
	`{"type":"function","function":{"name":"list_dir","description":"List a directory.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"grep","description":"Search files.","parameters":{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}}},` +
	`{"type":"function","function":{"name":"run_command","description":"Run a shell command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]`

type chunk struct {
	Choices []struct {
		Delta struct {
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

type call struct{ id, name, args string }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}

func run() error {
	base, err := url.Parse(os.Getenv("OPENAI_BASE_URL"))
	if err != nil || base.Host == "" || base.Scheme != "http" {
		return fmt.Errorf("OPENAI_BASE_URL must be an http:// URL, not %q", os.Getenv("OPENAI_BASE_URL"))
	}
	path := base.Path + "/chat/completions"
	model := os.Getenv("BENCH_MODEL")
	prompt, _ := json.Marshal(os.Getenv("BENCH_PROMPT"))
	msgs := []byte(`{"role":"user","content":` + string(prompt) + `}`)
	conn, err := net.Dial("tcp", base.Host)
	if err != nil {
		return err
	}
	for step := 0; step < 10000; step++ {
		body := []byte(`{"model":"` + model + `","stream":true,"messages":[`)
		body = append(append(body, msgs...), `],"tools":`+tools+`}`...)
		head := "POST " + path + " HTTP/1.1\r\nHost: " + base.Host + "\r\nContent-Type: application/json\r\n" +
			"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if _, err := conn.Write(append([]byte(head), body...)); err != nil {
			return err
		}
		next := make(chan net.Conn, 1)
		go func() { c, _ := net.Dial("tcp", base.Host); next <- c }()
		calls, done, err := read(conn)
		conn.Close()
		if err != nil {
			return err
		}
		if done {
			fmt.Printf("done after %d requests\n", step+1)
			return nil
		}
		for _, c := range calls {
			name, _ := json.Marshal(c.name)
			args, _ := json.Marshal(c.args)
			msgs = append(msgs, `,{"role":"assistant","content":"","tool_calls":[{"id":"`+c.id+`","type":"function","function":{"name":`+string(name)+`,"arguments":`+string(args)+`}}]}`...)
			msgs = append(msgs, `,{"role":"tool","tool_call_id":"`+c.id+`","content":"ok"}`...)
		}
		if conn = <-next; conn == nil {
			return fmt.Errorf("cannot connect to %s", base.Host)
		}
	}
	return fmt.Errorf("no final answer after 10000 requests")
}

// read reads one streamed answer to its [DONE] and returns its tool calls,
// or done when it was a final text.
func read(conn net.Conn) (calls []call, done bool, err error) {
	r := bufio.NewReader(conn)
	status, err := r.ReadString('\n')
	if err != nil {
		return nil, false, err
	}
	if len(status) < 12 || status[9:12] != "200" {
		return nil, false, fmt.Errorf("server answered %q", status)
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, false, fmt.Errorf("stream ended before [DONE]: %w", err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return calls, done, nil
		}
		var c chunk
		if json.Unmarshal(data, &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			if ch.FinishReason == "stop" {
				done = true
			}
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, call{})
				}
				if tc.ID != "" {
					calls[tc.Index].id, calls[tc.Index].name = tc.ID, tc.Function.Name
				}
				calls[tc.Index].args += tc.Function.Arguments
			}
		}
	}
}
