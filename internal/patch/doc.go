// Package patch owns the two patch formats mx-claw deals in: the codex
// apply_patch format that models write to change several files at once
// (parsed by [Parse], applied to one file's text by [ApplyToContent]), and
// unified diffs, which the file tools show after a change ([Unified]).
//
// The package is pure: it works on strings, touches no file system and
// imports no other mx-claw package, so any package may import it. The file
// tools in internal/tools/builtin are its users; they resolve paths,
// enforce the workspace boundary and do the writing.
//
// # The apply_patch format
//
//	*** Begin Patch
//	*** Add File: path/new.txt
//	+first line
//	+second line
//	*** Update File: path/old.go
//	*** Move to: path/renamed.go
//	@@ func main() {
//	 	context line
//	-	removed line
//	+	added line
//	*** End of File
//	*** Delete File: path/gone.txt
//	*** End Patch
//
// Parsing is lenient where models are known to slip and the intent is
// still clear: blank lines and whitespace around the envelope, a heredoc
// (<<'EOF' … EOF) or Markdown fence around it, CRLF patch text, padded
// markers, several @@ lines in a row (anchors searched in order), a
// unified-diff header such as "@@ -12,7 +12,8 @@ func f() {" (the range is
// ignored, the text after it is an anchor), an empty line
// inside a hunk (an empty context line), "\ No newline at end of file"
// (ignored), and hunk lines that lost their leading space (taken as
// context: they must still match the file). It is strict where a slip
// would change files in a way nobody asked for: the envelope must be
// complete, so a patch cut off mid-stream is refused rather than half
// applied.
//
// Applying follows codex's seek_sequence: the lines a hunk replaces are
// searched for exactly, then ignoring trailing whitespace, then ignoring
// leading and trailing whitespace, then with typographic punctuation
// folded to ASCII. Context lines keep the file's own text, so a loose
// match never rewrites the lines around a change. Line endings (LF or
// CRLF, per line) and a missing final newline are kept.
//
// # Unified diffs
//
// [Unified] is a line-based Myers diff written here rather than taken from
// a module (go-udiff was the candidate): it is about 200 lines, it knows
// about CRLF and missing final newlines, and it bounds its work so that a
// replace-all across a 50 MB file cannot stall a tool call.
package patch
