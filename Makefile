# Gatehouse build. `make run` and `make test` work on a fresh Debian 12
# machine with Go, Node and gcc installed: they fetch what they need
# themselves (Go modules, npm packages, Debian packages), and doing so twice
# is harmless.

SHELL       := /bin/bash
GO          ?= go
export GOFLAGS := -buildvcs=false
export CGO_ENABLED := 1

FUZZTIME    ?= 5s
# package:FuzzTarget pairs run briefly by `make fuzz` (and so by `make test`).
# A run that ends with the engine's own "context deadline exceeded" while it
# minimizes a new input, with no failing input written, is not a failure.
FUZZ_TARGETS := \
	./backend/bundle:FuzzParseManifest \
	./backend/bundle:FuzzCheckSchema \
	./backend/bundle:FuzzValidateInvocation \
	./backend/bundle:FuzzValidateResult \
	./backend/bundle:FuzzScanImports \
	./backend/skills:FuzzParseFrontmatter \
	./backend/policy:FuzzParseExecution \
	./backend/policy:FuzzParseCaptureSettings \
	./backend/policy:FuzzDecodeStoredPolicy \
	./backend/evidence:FuzzParse \
	./backend/evidence:FuzzCanonicalize \
	./backend/evidence:FuzzComputeID \
	./backend/internal/strictjson:FuzzKeyPath \
	./backend/internal/strictjson:FuzzSplit \
	./backend/internal/strictjson:FuzzDecodeFast \
	./backend/internal/strictjson:FuzzPlainEnd \
	./backend/capture:FuzzParseScenario \
	./backend/capture:FuzzVerifyRecord \
	./backend/capture/record:FuzzVerifyMatchesOracle \
	./backend/capture/record:FuzzPlainText \
	./backend/capture:FuzzScreen \
	./backend/capture:FuzzDecodeFrame \
	./backend/capture:FuzzRecordedFramesRender \
	./backend/capture:FuzzPlainPrefix \
	./backend/capture:FuzzAdvance \
	./backend/loopback:FuzzReplayPlan \
	./backend/replay:FuzzParseMachine \
	./backend/replay:FuzzParseRun \
	./backend/reactive:FuzzParse \
	./backend/reactive:FuzzVerifyRun \
	./backend/compare:FuzzParseTraceSpec \
	./backend/compare:FuzzParseJSON \
	./backend/compare:FuzzBehaviorTerminal \
	./backend/asciicast:FuzzImport \
	./backend/attest:FuzzParseAttestation

DESKTOP_TAGS := desktop,production,webkit2_41

# apt installs a Debian package when its command or file is missing.
define apt
	@if ! dpkg -s $(1) >/dev/null 2>&1; then \
	  echo "installing $(1)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(1) >/tmp/gatehouse-apt.log 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(1) >>/tmp/gatehouse-apt.log 2>&1; } || \
	  { cat /tmp/gatehouse-apt.log; exit 1; }; \
	fi
endef

# launcher rebuilds the native confinement launcher the Go build embeds
# (reproducible: TestEmbeddedLauncherIsBuiltFromSource compares the bytes).
launcher:
	backend/confine/launcher/build.sh

.PHONY: launcher icons all build build-bin run test interop vet gotest nodetest frontend renderer frontend-test e2e fuzz bench bench-mcp deps desktop desktop-smoke desktop-attention package package-check run-check e2e-attention clean

all: build

deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26+ is required" >&2; exit 1; }
	@command -v node >/dev/null || { echo "Node.js 20+ is required" >&2; exit 1; }
	@command -v gcc >/dev/null || { echo "gcc is required (cgo, go-sqlite3)" >&2; exit 1; }
	$(GO) mod download

frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

## frontend: the web UI, built into frontend/dist (embedded in the binary)
frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run build

## renderer: the capture's xterm.js renderer helper, bundled into
## backend/capture/render_helper.js (committed; embedded in the binary)
renderer: frontend/node_modules/.package-lock.json
	cd frontend && npm run --silent renderer >/dev/null

## build: bin/gatehouse (browser mode and CLI)
build: deps frontend build-bin

build-bin:
	$(GO) build -o bin/gatehouse .

## run: the desktop window on the default data directory when a display
## is present (DISPLAY or WAYLAND_DISPLAY), else browser mode with one line
## saying why and how to get the window
run: deps frontend
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  $(MAKE) --no-print-directory desktop && exec ./bin/gatehouse-desktop desktop; \
	else \
	  $(MAKE) --no-print-directory build-bin && \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset), so this is browser mode; run \`make run\` in a desktop session for the window." && \
	  exec ./bin/gatehouse serve; \
	fi

## test: everything CI runs
test: vet gotest nodetest frontend-test e2e fuzz interop

# cosign, a verifier this project did not write, built from the Go module
# proxy (a few minutes the first time; kept in bin/tools afterwards).
COSIGN_VERSION := v3.1.3
COSIGN := $(CURDIR)/bin/tools/cosign

$(COSIGN):
	@echo "building cosign $(COSIGN_VERSION) (first time only)"
	GOBIN=$(CURDIR)/bin/tools GOFLAGS= $(GO) install github.com/sigstore/cosign/v3/cmd/cosign@$(COSIGN_VERSION)

## interop: cosign verify-blob-attestation accepts Gatehouse's attestations
interop: deps $(COSIGN)
	GATEHOUSE_COSIGN=$(COSIGN) $(GO) test -count=1 -run '^TestCosignVerifiesAttestation$$' ./app/

vet: deps
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi
	$(GO) test -count=1 -run 'TestNoCitationOutsideRepository|TestExamples' ./docs/

gotest: deps frontend
	$(GO) test -race -count=1 -timeout 30m ./...

nodetest:
	node --test test/bundles/

frontend-test: frontend/node_modules/.package-lock.json
	cd frontend && npm run typecheck && npm test

## e2e: Playwright in Debian's Chromium against a test build of `gatehouse serve`
e2e: deps frontend
	$(call apt,chromium)
	$(call apt,sqlite3)
	$(GO) build -tags e2e -o bin/gatehouse-e2e .
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/run.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/mcp.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/evidence.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/settings.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/evidence_player.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/compare.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/consent.mjs
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/attention.mjs

fuzz: deps
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
	  log=/tmp/gatehouse-fuzz-$$name.log; \
	  if ! $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg >$$log 2>&1; then \
	    if grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input' $$log; then \
	      echo "  (the fuzz engine hit its own deadline while minimizing; no failing input)"; \
	    else cat $$log; exit 1; fi; \
	  fi; \
	done

## e2e-attention: only the browser-mode attention suite of `make e2e` (tab
## title, Notification API, the bell setting, two windows, a request waiting
## when a window opens), for running it alone or many times
e2e-attention: deps frontend
	$(call apt,chromium)
	$(GO) build -tags e2e -o bin/gatehouse-e2e .
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse-e2e node e2e/attention.mjs

## bench: benchmarks reported side by side with their baselines
bench: deps frontend/node_modules/.package-lock.json
	$(GO) test -run '^$$' -bench . -benchtime 3s ./backend/artifact
	$(GO) test -run '^$$' -bench 'CheckedVsBare' -benchtime 100x -count 3 ./backend/runner
	PHASES=1 $(GO) test -count=1 -run PhaseTimes -v ./backend/runner | grep -E 'phase_test|ok'
	GATEHOUSE_SOAK=1 $(GO) test -count=1 -run NoLeaks -v ./backend/runner | grep -E 'attempts|ok|FAIL'
	$(GO) test -count=1 -run ColdStart -v ./app | grep -E 'cold start|ok|FAIL'
	$(GO) test -run '^$$' -bench 'CaptureVsScript' -benchtime 3x ./backend/capture
	$(GO) test -run '^$$' -bench 'RenderVsXterm' -benchtime 3x ./backend/capture
	$(GO) test -run '^$$' -bench 'CaptureProcessVsScript' -benchtime 3x ./app

## bench-mcp: run_skill over MCP vs a CLI run of the same trusted skill
bench-mcp: build
	cd frontend && GATEHOUSE_BIN=$(CURDIR)/bin/gatehouse node e2e/overhead.mjs

## desktop: bin/gatehouse-desktop, the Wails window (WebKitGTK)
desktop: deps frontend
	$(call apt,libgtk-3-dev)
	$(call apt,libwebkit2gtk-4.1-dev)
	$(GO) build -tags $(DESKTOP_TAGS) -ldflags "-w -s" -o bin/gatehouse-desktop .

## desktop-smoke: start the window under Xvfb, load the UI, round-trip one call
desktop-smoke: desktop
	$(call apt,xvfb)
	GATEHOUSE_DATA_DIR=$$(mktemp -d)/data xvfb-run -a -s "-screen 0 1280x800x24" ./bin/gatehouse-desktop desktop --smoke

## run-check: `make run` under Xvfb opens the window (screenshot and pixel
## check), and without a display serves browser mode
run-check: deps frontend
	$(call apt,xvfb)
	$(call apt,x11-utils)
	$(call apt,imagemagick)
	.ci/run-check

## package: bin/gatehouse_<version>_<arch>.deb (desktop binary, desktop entry, icons)
package: desktop
	@build/linux/package.sh bin/gatehouse-desktop $$(sed -n 's/^const Version = "\(.*\)"/\1/p' app/facade_skills.go)

## package-check: install the .deb with apt, run doctor and the window's
## smoke test from the installed binary, validate the desktop entry, remove
package-check: package
	$(call apt,xvfb)
	$(call apt,desktop-file-utils)
	.ci/package-check

## desktop-attention: under Xvfb and a real D-Bus session bus, an agent's
## request flags the unfocused window and reaches a test notification server
desktop-attention: desktop
	$(call apt,xvfb)
	$(call apt,x11-utils)
	$(call apt,xdotool)
	$(call apt,dbus)
	GATEHOUSE_DESKTOP_BIN=$(CURDIR)/bin/gatehouse-desktop xvfb-run -a -s "-screen 0 1280x800x24" \
	  dbus-run-session -- $(GO) test -count=1 -run 'TestDesktopAttention|TestAttentionNotifiesOverDBus' ./app/

clean:
	rm -rf bin frontend/node_modules

## icons: render build/appicon.png and build/icons/NxN.png from build/appicon.svg
icons:
	$(call apt,librsvg2-bin)
	rsvg-convert -w 1024 -h 1024 build/appicon.svg -o build/appicon.png
	for s in 16 22 24 32 48 64 128 256 512; do rsvg-convert -w $$s -h $$s build/appicon.svg -o build/icons/$${s}x$${s}.png; done
