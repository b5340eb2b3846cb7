# mx-claw — build, install and test.
GO ?= go
BIN ?= bin/mx-claw
# INSTALL_FLAGS are go install's build flags for `make install`.
INSTALL_FLAGS ?= -trimpath

.PHONY: build install test test-deps bench vet lint fuzz-shell

# The binary is always cgo-free; only the race detector run of `make test`
# builds test binaries with cgo (the race detector needs it).

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/mx-claw

# install says where the binary goes, that a first build takes a while
# (it downloads the Go modules), and whether the directory is on PATH.
install:
	@dest=$$($(GO) env GOBIN); [ -n "$$dest" ] || dest=$$($(GO) env GOPATH)/bin; \
	echo "Building mx-claw (static, cgo-free) and installing it into $$dest."; \
	echo "The first build downloads the Go modules it needs and can take a few minutes on a small machine."
	CGO_ENABLED=0 $(GO) install $(INSTALL_FLAGS) ./cmd/mx-claw
	@dest=$$($(GO) env GOBIN); [ -n "$$dest" ] || dest=$$($(GO) env GOPATH)/bin; \
	echo "Installed $$dest/mx-claw. Run mx-claw in a project; the first run sets up a model."; \
	case ":$$PATH:" in *":$$dest:"*) ;; *) echo "Note: $$dest is not on your PATH; add it to run mx-claw by name.";; esac

# TEST_NODE is where test-deps installs the npm packages the tests drive
# mx-claw with (the official ACP client); the tests look there too.
TEST_NODE ?= $(or $(MX_CLAW_TEST_NODE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mx-claw-test/node)
# The real MCP servers the MCP tests run, installed with npm into a cache
# directory (the tests read MX_CLAW_TEST_NPM_DIR, and default to the same
# place); once there, the tests run offline.
MCP_NPM_PACKAGES = @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
export MX_CLAW_TEST_NPM_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mx-claw-test/npm

# TEST_APT_PACKAGES are the Debian packages the tests use.
TEST_APT_PACKAGES = git ripgrep tmux gnome-keyring libsecret-tools dbus strace jq python3 bubblewrap netcat-openbsd curl wget chromium xvfb xclip postgresql

# test-deps installs the system packages the tests use (Debian/Ubuntu, as
# root or with sudo), only those missing: with all of them there, it
# neither updates the package lists nor installs anything. A test whose
# tool is missing skips with a reason.
test-deps:
	@if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then \
		missing=; for p in $(TEST_APT_PACKAGES); do \
			dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
		if [ -n "$$missing" ]; then \
			SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
			echo "test-deps: installing$$missing"; \
			$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing >/dev/null; fi; \
	else echo "test-deps: no apt-get here; install git and ripgrep yourself"; fi
	@# Node.js for the MCP servers, from apt only when there is none: Debian's
	@# npm package conflicts with a Node.js installed from elsewhere.
	@if ! command -v node >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get install -y -qq nodejs npm >/dev/null; fi
	@if [ -f "$(TEST_NODE)/node_modules/@agentclientprotocol/sdk/package.json" ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
		mkdir -p "$(TEST_NODE)" && npm install --prefix "$(TEST_NODE)" --no-audit --no-fund --silent @agentclientprotocol/sdk@2.4.0; \
	else echo "test-deps: no npm here; the ACP client test will skip"; fi
	@if [ -f "$(MX_CLAW_TEST_NPM_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] && \
		[ -f "$(MX_CLAW_TEST_NPM_DIR)/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
		mkdir -p "$(MX_CLAW_TEST_NPM_DIR)" && \
		npm install --prefix "$(MX_CLAW_TEST_NPM_DIR)" --no-audit --no-fund --loglevel=error $(MCP_NPM_PACKAGES) >/dev/null; \
	else echo "test-deps: no npm here; the MCP tests against real servers skip"; fi
	@# gopls, the language server the diagnostics tests drive (they find it on
	@# PATH or in $$(go env GOPATH)/bin). Pinned: newer ones need a newer Go.
	@if command -v gopls >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/gopls" ]; then :; \
	else $(GO) install golang.org/x/tools/gopls@v0.23.0 || echo "test-deps: gopls could not be installed; the LSP tests skip"; fi

# lint runs staticcheck, pinned in go.mod as a tool (go tool staticcheck);
# a finding that must stay is suppressed where it is, with
# //lint:ignore CHECK and the reason.
lint:
	$(GO) tool staticcheck ./...

vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# test runs everything once without cgo (as the binary is built), then
# every internal package again under the race detector.
test: test-deps vet lint
	CGO_ENABLED=0 $(GO) test -count=1 ./...
	@if command -v gcc >/dev/null 2>&1; then \
		$(GO) test -race -count=1 ./internal/...; \
	else echo "test: no C compiler, so the race detector run is skipped"; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/agent/ ./internal/llm/... ./internal/store/
	$(GO) test -run '^$$' -bench Overhead -benchtime 20x ./internal/sandbox/
	$(GO) test -run '^$$' -bench Steps -benchtime 2s ./internal/store/postgres/

# fuzz-shell is the long run of the differential test of the command
# classifier against real bash under strace (FUZZTIME, default 10m).
FUZZTIME ?= 10m
fuzz-shell:
	$(GO) test -run '^$$' -fuzz FuzzEvaluationAgainstBash -fuzztime $(FUZZTIME) ./internal/permission/
	$(GO) test -run '^TestEvaluationAgainstBash$$' -evalcases 20000 ./internal/permission/
