// Package browser starts a real headless Chromium for tests of the web
// panel and hands back a chromedp context driving one tab. Only _test.go
// files import it; it imports nothing of mx-claw.
//
// Chromium is Debian's `chromium` (make test-deps installs it); a machine
// without it skips the test with the reason. The flags are the ones this
// kind of machine needs: no sandbox (tests run as root), no GPU, and none
// of the browser's own network traffic (component updates, sync, the
// first-run pages), which a closed network refuses by the dozen.
package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Path returns the Chromium binary to use: $MX_CLAW_CHROMIUM if set, else
// the first of chromium, chromium-browser, google-chrome on PATH; "" if
// there is none.
func Path() string {
	if p := os.Getenv("MX_CLAW_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start launches a fresh headless Chromium (its own profile in a temp
// dir) and returns a context for its first tab, with a timeout. The
// browser is closed when the test ends. A test on a machine without
// Chromium is skipped with the reason.
func Start(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	bin := Path()
	if bin == "" {
		t.Skip("chromium is not installed (make test-deps installs Debian's chromium); the browser tests need a real browser")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	// The browser lives as long as the context of its first action, so
	// that one has no deadline; the test's actions get one.
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start chromium (%s): %v", bin, err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// Size sets the tab's viewport: width and height in CSS pixels, and
// whether it is a phone (touch, mobile viewport).
func Size(width, height int64, mobile bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: width, Height: height, DeviceScaleFactor: 1, Mobile: mobile,
		})
		return err
	})
}

// Dark makes the page see prefers-color-scheme: dark (or light again).
func Dark(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		scheme := "light"
		if on {
			scheme = "dark"
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// Screenshot saves a PNG of the tab's viewport as name (without
// extension) in ArtifactDir and returns its path.
func Screenshot(ctx context.Context, t testing.TB, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	return p
}

// artifactDirs remembers each running test's artifact directory.
var artifactDirs sync.Map // testing.TB -> string

// ArtifactDir returns where a test keeps what it produced for people to
// look at: $TEST_ARTIFACTS/<test name> if that is set, else one temp dir
// of the test (the same one on every call).
func ArtifactDir(t testing.TB) string {
	t.Helper()
	if dir, ok := artifactDirs.Load(t); ok {
		return dir.(string)
	}
	var dir string
	if base := os.Getenv("TEST_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, filepath.FromSlash(t.Name()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		dir = t.TempDir()
	}
	artifactDirs.Store(t, dir)
	t.Cleanup(func() { artifactDirs.Delete(t) })
	return dir
}
