# mx-claw — build, install and test.
GO ?= go
BIN ?= bin/mx-claw

.PHONY: build install test test-deps bench vet fuzz-shell

# The binary is always cgo-free; only the race detector run of `make test`
# builds test binaries with cgo (the race detector needs it).

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/mx-claw

install:
	CGO_ENABLED=0 $(GO) install -trimpath ./cmd/mx-claw

# test-deps installs the system packages the tests use (Debian/Ubuntu, as
# root or with sudo); a test whose tool is missing skips with a reason.
test-deps:
	@if command -v apt-get >/dev/null 2>&1; then \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq git ripgrep tmux gnome-keyring libsecret-tools dbus strace jq python3 bubblewrap netcat-openbsd curl wget postgresql >/dev/null; \
	else echo "test-deps: no apt-get here; install git and ripgrep yourself"; fi

vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

test: test-deps vet
	CGO_ENABLED=0 $(GO) test -count=1 ./...
	@if command -v gcc >/dev/null 2>&1; then \
		$(GO) test -race -count=1 ./internal/agent/ ./internal/store/ ./internal/llm/... ./internal/execx/ ./internal/hooks/; \
	else echo "test: no C compiler, so the race detector run is skipped"; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/agent/ ./internal/llm/... ./internal/store/
	$(GO) test -run '^$$' -bench Overhead -benchtime 20x ./internal/sandbox/

# fuzz-shell is the long run of the differential test of the command
# classifier against real bash under strace (FUZZTIME, default 10m).
FUZZTIME ?= 10m
fuzz-shell:
	$(GO) test -run '^$$' -fuzz FuzzEvaluationAgainstBash -fuzztime $(FUZZTIME) ./internal/permission/
	$(GO) test -run '^TestEvaluationAgainstBash$$' -evalcases 20000 ./internal/permission/
