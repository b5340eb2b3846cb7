package builtin

import (
	"bytes"
	"path/filepath"
	"strings"
)

// utf16Text is what guessFileType calls text with a UTF-16 byte order mark.
const utf16Text = "UTF-16 text"

// guessFileType names the kind of a binary file from its first bytes and,
// failing that, its extension, to tell the model what it is instead of
// showing it. It never fails: the last resort is "unknown binary data".
func guessFileType(head []byte, name string) string {
	has := func(prefix string) bool { return bytes.HasPrefix(head, []byte(prefix)) }
	at := func(off int, s string) bool {
		return len(head) >= off+len(s) && string(head[off:off+len(s)]) == s
	}
	switch {
	case has("\x89PNG\r\n\x1a\n"):
		return "PNG image"
	case has("\xff\xd8\xff"):
		return "JPEG image"
	case has("GIF87a"), has("GIF89a"):
		return "GIF image"
	case has("RIFF") && at(8, "WEBP"):
		return "WebP image"
	case has("RIFF") && at(8, "WAVE"):
		return "WAV audio"
	case has("BM") && len(head) > 14 && filepath.Ext(name) == ".bmp":
		return "BMP image"
	case has("\x00\x00\x01\x00"):
		return "ICO icon"
	case has("%PDF-"):
		return "PDF document"
	case has("PK\x03\x04"), has("PK\x05\x06"):
		return zipKind(name)
	case has("\x1f\x8b"):
		return "gzip archive"
	case has("BZh"):
		return "bzip2 archive"
	case has("\xfd7zXZ\x00"):
		return "xz archive"
	case has("\x28\xb5\x2f\xfd"):
		return "zstd archive"
	case has("7z\xbc\xaf\x27\x1c"):
		return "7-Zip archive"
	case at(257, "ustar"):
		return "tar archive"
	case has("\x7fELF"):
		return "ELF executable or object file"
	case has("\xfe\xed\xfa\xce"), has("\xfe\xed\xfa\xcf"),
		has("\xce\xfa\xed\xfe"), has("\xcf\xfa\xed\xfe"):
		return "Mach-O executable"
	case has("\xca\xfe\xba\xbe"):
		if filepath.Ext(name) == ".class" {
			return "Java class file"
		}
		return "Mach-O universal binary or Java class file"
	case has("MZ"):
		return "Windows executable (PE)"
	case has("\x00asm"):
		return "WebAssembly module"
	case has("SQLite format 3\x00"):
		return "SQLite database"
	case has("\xff\xfe"), has("\xfe\xff"):
		return utf16Text
	case has("ID3"):
		return "MP3 audio"
	case at(4, "ftyp"):
		return "MP4/QuickTime media"
	case has("OggS"):
		return "Ogg media"
	case has("fLaC"):
		return "FLAC audio"
	case has("wOFF"), has("wOF2"):
		return "WOFF font"
	case has("\x00\x01\x00\x00"), has("OTTO"):
		return "TrueType/OpenType font"
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".o", ".a", ".so", ".dylib", ".dll", ".lib":
		return "compiled object or library"
	case ".pyc":
		return "Python bytecode"
	case ".db", ".sqlite":
		return "database file"
	case ".bin", ".dat":
		return "binary data"
	}
	return "unknown binary data"
}

// zipKind tells apart the common formats that are zip files inside.
func zipKind(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jar", ".war":
		return "Java archive (zip)"
	case ".docx", ".xlsx", ".pptx":
		return "Office Open XML document (zip)"
	case ".odt", ".ods", ".odp":
		return "OpenDocument file (zip)"
	case ".apk":
		return "Android package (zip)"
	case ".whl":
		return "Python wheel (zip)"
	}
	return "zip archive"
}
