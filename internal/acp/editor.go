package acp

import (
	"context"

	"github.com/mx-claw/mx-claw/internal/jsonrpc"
)

// clientFiles is the editor's file system as the file tools see it
// (app.Editor): fs/read_text_file and fs/write_text_file, as far as the
// client offers them.
type clientFiles struct {
	conn        *jsonrpc.Conn
	sessionID   string
	read, write bool
}

func (f *clientFiles) ReadTextFile(ctx context.Context, abs string) (string, bool, error) {
	if !f.read {
		return "", false, nil
	}
	var res readTextFileResult
	if err := f.conn.Call(ctx, "fs/read_text_file", readTextFileParams{SessionID: f.sessionID, Path: abs}, &res); err != nil {
		return "", false, err
	}
	return res.Content, true, nil
}

func (f *clientFiles) WriteTextFile(ctx context.Context, abs, content string) (bool, error) {
	if !f.write {
		return false, nil
	}
	err := f.conn.Call(ctx, "fs/write_text_file", writeTextFileParams{SessionID: f.sessionID, Path: abs, Content: content}, nil)
	return err == nil, err
}
